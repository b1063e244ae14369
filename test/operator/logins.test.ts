import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { consoleWorld, type ConsoleWorld } from "./support.ts";

// Issue 35 on the console: an account's page lists its dashboard logins with their last sign-in,
// gives one a new password or removes it (their sessions end); its forms carry the schema's rules
// as HTML attributes, and a refused form says at the top of the page which field breaks which
// rule, the first such field focused. Over real HTTP, on either backend.

let world: ConsoleWorld;
let cookie: string;
let acme: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  world = await consoleWorld();
  acme = await createAccount(world.url, "Acme");
  other = await createAccount(world.url, "Other");
  cookie = (await world.operator()).cookie;
});
afterAll(() => world.close());

const page = async (path: string) => (await world.get(cookie, path)).text();
const userOf = async (account: TestAccount) => (await world.deps.store.users.byEmail(account.email))!;
const sessionLives = async (userCookie: string) =>
  (await fetch(`${world.url}/api/settings`, { headers: { cookie: userCookie } })).status === 200;

/** The opening tag of the input with this id. */
function input(html: string, id: string): string {
  const tag = html.match(new RegExp(`<input[^>]*id="${id}"[^>]*>`))?.[0];
  if (!tag) throw new Error(`no input #${id}`);
  return tag;
}

describe("the account page's logins", () => {
  test("listed with their last sign-in: Never, then the time", async () => {
    const path = `/operator/accounts/${acme.id}`;
    expect(await page(path)).toMatch(/<td[^>]*>Never|>Never</);
    await signInCookie(world.url, acme);
    const after = await page(path);
    expect(after).not.toContain(">Never<");
    expect(after).toContain("Last sign-in");
  });

  test("a new password ends the user's sessions; the old one no longer signs in", async () => {
    const session = await signInCookie(world.url, acme);
    const user = await userOf(acme);
    const done = await world.post(cookie, `/operator/accounts/${acme.id}/users/${user.id}/password`, {
      password: "the operator's new one",
    });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`/operator/accounts/${acme.id}?done=password&user=${user.id}`);
    expect(await page(done.headers.get("location")!)).toContain(`${acme.email} has a new password`);
    expect(await sessionLives(session)).toBe(false);
    await expect(signInCookie(world.url, acme)).rejects.toThrow("401");
    acme = { ...acme, password: "the operator's new one" };
    await signInCookie(world.url, acme);
  });

  test("a password of 5 characters is refused with the length rule, at the top of the page, the field focused", async () => {
    const user = await userOf(acme);
    const refused = await world.post(cookie, `/operator/accounts/${acme.id}/users/${user.id}/password`, {
      password: "short",
    });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    const summary = html.indexOf('id="error-summary"');
    expect(summary).toBeGreaterThan(0);
    // Above everything else of the page: the account's facts come after it.
    expect(summary).toBeLessThan(html.indexOf('id="facts-heading"'));
    expect(html).toContain("The new password was not saved.");
    expect(html).toContain(`<a href="#password-${user.id}">New password for ${acme.email}</a>`);
    expect(html).toContain("Must be at least 10 characters long.");
    expect(html).not.toContain("This is required.");
    expect(input(html, `password-${user.id}`)).toContain("autofocus");
    expect(html).not.toContain("short");
  });

  test("the create and add forms carry the schema's rules as attributes; a refused one lists each field to fix", async () => {
    const accounts = await page("/operator/accounts");
    expect(input(accounts, "user-password")).toMatch(
      /type="password"[^>]*required[^>]*minlength="10"[^>]*maxlength="200"/,
    );
    expect(input(accounts, "account-email")).toMatch(/type="email"[^>]*required[^>]*maxlength="320"/);
    expect(input(accounts, "account-name")).toMatch(/required[^>]*minlength="1"[^>]*maxlength="200"/);
    const account = await page(`/operator/accounts/${acme.id}`);
    expect(input(account, "new-user-password")).toMatch(/required[^>]*minlength="10"/);

    const refused = await world.post(cookie, "/operator/accounts", {
      name: "Globex",
      email: "nope",
      user_email: "hank@globex.example",
      user_password: "short",
    });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain("The new account was not saved.");
    expect(html).toContain("Fix these 2 fields:");
    expect(html).toContain(
      '<a href="#account-email">Contact email</a>: <span>Must be an email address, like name@example.com.</span>',
    );
    expect(html).toContain("Must be at least 10 characters long.");
    // The summary comes before the accounts' table; the first field to fix is focused, and only it.
    expect(html.indexOf('id="error-summary"')).toBeLessThan(html.indexOf("<table"));
    expect(input(html, "account-email")).toContain("autofocus");
    expect(input(html, "user-password")).not.toContain("autofocus");
    expect(html.match(/autofocus/g)).toHaveLength(1);
  });

  test("a removed login cannot sign in and its sessions end; another account's user under this one is 404 and stays", async () => {
    const theirs = await userOf(other);
    const otherSession = await signInCookie(world.url, other);
    for (const action of ["password", "delete"]) {
      const r = await world.post(cookie, `/operator/accounts/${acme.id}/users/${theirs.id}/${action}`, {
        password: "long enough password",
      });
      expect(r.status).toBe(404);
      expect(await r.text()).toContain(`No dashboard user ${theirs.id}.`);
    }
    expect(await sessionLives(otherSession)).toBe(true);
    await signInCookie(world.url, other);

    const user = await userOf(acme);
    const session = await signInCookie(world.url, acme);
    const removed = await world.post(cookie, `/operator/accounts/${acme.id}/users/${user.id}/delete`);
    expect(removed.status).toBe(303);
    expect(await page(removed.headers.get("location")!)).toContain("The user is removed");
    expect(await sessionLives(session)).toBe(false);
    await expect(signInCookie(world.url, acme)).rejects.toThrow("401");
    expect((await world.post(cookie, `/operator/accounts/${acme.id}/users/${user.id}/delete`)).status).toBe(404);
  });
});
