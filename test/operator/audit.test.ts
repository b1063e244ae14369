// Issue 29: what operators do is in the audit log (docs/operations.md#audit-log), over real HTTP and
// the CLI (a real process) on the test backend: their sign-ins, failed sign-ins and sign-outs, each
// change the console makes (by the signed-in operator, from their address), and the CLI's
// `admin operators` commands; never a password, hash or session token. The console's Audit log page
// reads them, filtered by account, actor, action and time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TEST_ADMIN_TOKEN } from "../support/harness.ts";
import { allEntries, auditTrail, LOOPBACK, Secrets } from "../audit/support.ts";
import { createAccount, operatorNumber, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { consoleWorld, operatorCookie, operatorsCli, type ConsoleWorld, type TestOperator } from "./support.ts";
import { SIGN_IN_WINDOW_MS } from "../../src/auth/throttle.ts";

let world: ConsoleWorld;
let trail: ReturnType<typeof auditTrail>;
const secrets = new Secrets();
let op: TestOperator;
let acme: TestAccount;

/** The operator, as an entry names them. */
const actor = () => ({ kind: "operator", id: op.id, email: op.email });
const cookieValue = (cookie: string) => cookie.slice(cookie.indexOf("=") + 1);

beforeAll(async () => {
  world = await consoleWorld();
  // The CLI's process keeps the real time: the test's clock starts there too.
  world.deps.clock.set(Date.now());
  trail = auditTrail(world.url);
  acme = await createAccount(world.url, "Acme");
  await operatorNumber(world.url, acme.id, "waba-acme", "1001");
  secrets.add(TEST_ADMIN_TOKEN, acme.password);
});
afterAll(() => world.close());

const signIn = (email: string, password: string) =>
  fetch(`${world.url}/operator/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });

describe("operators' sessions", () => {
  test("a sign-in is the operator's session.create, in no account, from their address", async () => {
    await trail.fresh();
    op = await world.operator("ana@ops.example", "ana password 1");
    secrets.add(op.password, cookieValue(op.cookie));
    const [created, session] = await trail.fresh();
    expect(created).toMatchObject({
      actor: { kind: "operator_token", id: "cli" },
      action: "operator.create",
      object: { kind: "operator", id: op.id },
      account_id: null,
      ip: null,
      changes: { email: [null, "ana@ops.example"] },
    });
    expect(session).toMatchObject({
      actor: actor(),
      action: "session.create",
      object: { kind: "operator", id: op.id },
      account_id: null,
      ip: LOOPBACK,
      changes: {},
    });

    // The console's sign-in form is the same sign-in.
    const form = await fetch(`${world.url}/operator/sign-in`, {
      method: "POST",
      headers: { origin: world.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: op.email, password: op.password, next: "/operator" }),
      redirect: "manual",
    });
    expect(form.status).toBe(303);
    secrets.add(cookieValue(form.headers.get("set-cookie")?.split(";")[0] ?? ""));
    expect(await trail.fresh()).toMatchObject([{ actor: actor(), action: "session.create", ip: LOOPBACK }]);
  });

  test("a wrong password is the operator's session.failed; an unknown email's names nobody; a locked one records nothing", async () => {
    world.deps.clock.advance(1);
    expect((await signIn(op.email, "not ana's password")).status).toBe(401);
    expect(await trail.fresh()).toEqual([
      expect.objectContaining({
        actor: actor(),
        action: "session.failed",
        object: { kind: "operator", id: op.id },
        account_id: null,
        ip: LOOPBACK,
        changes: {},
      }),
    ]);
    // The email typed is not kept: it may be a password typed in the wrong box.
    expect((await signIn("a-password-typed-here", "whatever it is")).status).toBe(401);
    secrets.add("a-password-typed-here");
    expect(await trail.fresh()).toMatchObject([
      {
        actor: { kind: "operator", id: "unknown" },
        action: "session.failed",
        object: { kind: "operator", id: "unknown" },
      },
    ]);
    for (let i = 0; i < 4; i++) expect((await signIn(op.email, "not ana's password")).status).toBe(401);
    expect((await trail.fresh()).map((e) => e.action)).toEqual(Array(4).fill("session.failed"));
    await trail.none(() => signIn(op.email, "not ana's password"), 429);
    await trail.none(() => signIn(op.email, op.password), 429);
    // Past the lock's 15 minutes.
    world.deps.clock.advance(SIGN_IN_WINDOW_MS);
  });

  test("a sign-out is session.delete; one without a session records nothing", async () => {
    const cookie = await operatorCookie(world.url, op.email, op.password);
    secrets.add(cookieValue(cookie));
    await trail.fresh();
    const signOut = () =>
      fetch(`${world.url}/operator/session`, { method: "DELETE", headers: { cookie, origin: world.url } });
    expect((await signOut()).status).toBe(204);
    expect(await trail.fresh()).toMatchObject([
      { actor: actor(), action: "session.delete", object: { kind: "operator", id: op.id }, ip: LOOPBACK },
    ]);
    await trail.none(signOut, 204);
    op.cookie = await operatorCookie(world.url, op.email, op.password);
    secrets.add(cookieValue(op.cookie));
    await trail.fresh();
  });
});

describe("the console's changes are the signed-in operator's", () => {
  const byOperator = () => ({ actor: actor(), ip: LOOPBACK });
  let globex: string;

  test("an account and its first user; its billing status; another user", async () => {
    world.deps.clock.advance(1);
    const created = await world.post(op.cookie, "/operator/accounts", {
      name: "Globex",
      email: "billing@globex.example",
      billing_status: "active",
      retention: "24h",
      user_email: "hank@globex.example",
      user_password: "hank password 1",
    });
    expect(created.status).toBe(303);
    secrets.add("hank password 1");
    globex = new URL(created.headers.get("location") ?? "", world.url).pathname.split("/").at(-1) ?? "";
    expect(await trail.fresh()).toMatchObject([
      {
        ...byOperator(),
        action: "account.create",
        object: { kind: "account", id: globex },
        account_id: globex,
        changes: { name: [null, "Globex"], billing_status: [null, "active"] },
      },
      {
        ...byOperator(),
        action: "user.create",
        account_id: globex,
        changes: { email: [null, "hank@globex.example"] },
      },
    ]);
    world.deps.clock.advance(1);
    expect(
      (await world.post(op.cookie, `/operator/accounts/${globex}/billing`, { billing_status: "overdue" })).status,
    ).toBe(303);
    expect(await trail.fresh()).toMatchObject([
      { ...byOperator(), action: "account.update", changes: { billing_status: ["active", "overdue"] } },
    ]);
    // A user whose email is taken is refused, and leaves nothing.
    await trail.none(
      () =>
        world.post(op.cookie, `/operator/accounts/${globex}/users`, {
          email: "hank@globex.example",
          password: "another password 2",
        }),
      409,
    );
  });

  test("a key revoked and a number checked again, on the console and through the operator API with the session", async () => {
    const key = await (
      await fetch(`${world.url}/admin/accounts/${acme.id}/api-keys`, {
        method: "POST",
        headers: { cookie: op.cookie, origin: world.url, "content-type": "application/json" },
        body: JSON.stringify({ mode: "live", name: "billing server" }),
      })
    ).json();
    secrets.add(key.key);
    expect(await trail.fresh()).toMatchObject([
      { ...byOperator(), action: "api_key.create", object: { kind: "api_key", id: key.id }, account_id: acme.id },
    ]);
    world.deps.clock.advance(1);
    const revoke = `/operator/accounts/${acme.id}/api-keys/${key.id}/revoke`;
    expect((await world.post(op.cookie, revoke)).status).toBe(303);
    expect(await trail.fresh()).toMatchObject([
      { ...byOperator(), action: "api_key.revoke", object: { kind: "api_key", id: key.id }, account_id: acme.id },
    ]);
    // Another account's key under Acme's path is no key: nothing changes, nothing is recorded.
    await trail.none(() => world.post(op.cookie, `/operator/accounts/${globex}/api-keys/${key.id}/revoke`), 404);

    world.deps.clock.advance(1);
    expect((await world.post(op.cookie, `/operator/accounts/${acme.id}/numbers/1001/check`)).status).toBe(303);
    expect(await trail.fresh()).toMatchObject([
      { ...byOperator(), action: "number.sync", object: { kind: "number", id: "1001" }, account_id: acme.id },
    ]);
  });
});

describe("the CLI's operators commands", () => {
  /** A command as a step of the trail: its exit code for a status. */
  const cli =
    (...args: string[]) =>
    async () => ({ status: (await operatorsCli(world, ...args)).code });

  test("create, reset-password and delete are the command line's, never with the password; a refused one leaves none", async () => {
    const created = await operatorsCli(world, "create", "--email", "bo@ops.example", "--password", "bo password 1");
    expect(created.code).toBe(0);
    const bo = created.json.id as string;
    const byCli = { actor: { kind: "operator_token", id: "cli" }, ip: null, account_id: null };
    expect(await trail.fresh()).toMatchObject([
      { ...byCli, action: "operator.create", object: { kind: "operator", id: bo } },
    ]);
    await trail.none(cli("create", "--email", "BO@ops.example", "--password", "bo password 2"), 1);
    const hash = (await world.deps.store.operators.byId(bo))?.passwordHash;
    expect((await operatorsCli(world, "reset-password", bo, "--password", "bo password 3")).code).toBe(0);
    expect(await trail.fresh()).toEqual([
      expect.objectContaining({
        ...byCli,
        action: "operator.reset_password",
        object: { kind: "operator", id: bo },
        changes: { password: ["[secret]", "[secret changed]"] },
      }),
    ]);
    const newHash = (await world.deps.store.operators.byId(bo))?.passwordHash;
    expect((await operatorsCli(world, "delete", "bo@ops.example")).code).toBe(0);
    expect(await trail.fresh()).toMatchObject([
      { ...byCli, action: "operator.delete", changes: { email: ["bo@ops.example", null] } },
    ]);
    await trail.none(cli("delete", "bo@ops.example"), 1);
    secrets.add("bo password 1", "bo password 2", "bo password 3", hash, newHash);
    secrets.add((await world.deps.store.operators.byId(op.id))?.passwordHash);
  });
});

test("no entry, as the API gives it or as stored, holds a password, hash, session token, key or the admin token", async () => {
  expect(secrets.size).toBeGreaterThan(12);
  secrets.expectAbsent(await allEntries(world.url), await world.deps.query("SELECT * FROM audit_log"));
});

describe("the Audit log page", () => {
  const page = async (query = "", cookie = op.cookie) => {
    const r = await world.get(cookie, `/operator/audit${query}`);
    return { status: r.status, csp: r.headers.get("content-security-policy"), text: await r.text() };
  };
  /** The list's rows, not the filter's choices (which name every action). */
  const table = (text: string) => text.split("<tbody>")[1]?.split("</tbody>")[0] ?? "";
  const rows = (text: string) => (table(text).match(/<tr>/g) ?? []).length;

  test("every entry, newest first, under the console's CSP", async () => {
    const all = await page();
    expect(all.status).toBe(200);
    expect(all.csp).toBe((await world.get(op.cookie, "/operator")).headers.get("content-security-policy"));
    expect(all.text).toContain('aria-current="page">Audit log</a>');
    const list = table(all.text);
    for (const words of ["Revoked an API key", "Checked a number again", "Reset an operator&#x27;s password"])
      expect(list).toContain(words);
    expect(list).toContain("Operator ana@ops.example");
    expect(list).toContain("Operator (command line)");
    expect(list.indexOf("Deleted an operator")).toBeLessThan(list.indexOf("Added an operator"));
    expect(rows(all.text)).toBe(Math.min((await allEntries(world.url)).length, 50));
  });

  test("filtered by account, actor, action and time; a hand-made filter that is not one is said", async () => {
    const acmes = table((await page(`?account_id=${acme.id}`)).text);
    expect(acmes).toContain("Revoked an API key");
    expect(acmes).not.toContain("Added an operator");
    expect(acmes).not.toContain("Globex");
    const entries = await allEntries(world.url, { account_id: acme.id, actor: op.email });
    const mine = await page(`?account_id=${acme.id}&actor=${encodeURIComponent(op.email)}`);
    expect(rows(mine.text)).toBe(entries.length);
    expect(table(mine.text)).not.toContain("Operator (API token)");
    expect(rows((await page("?action=api_key.revoke")).text)).toBe(1);
    const keys = await page("?action=api_key");
    expect(rows(keys.text)).toBe(2);
    expect(table(keys.text)).toContain("Created an API key");
    const later = new Date(Math.max(world.deps.clock.now(), Date.now()) + 3_600_000).toISOString().slice(0, 16);
    expect((await page(`?from=${later}`)).text).toContain("No entries match this filter.");
    const bogus = await page("?action=everything");
    expect(bogus.status).toBe(200);
    expect(bogus.text).toContain("action must be one of");
  });

  test("an account user's session does not open it", async () => {
    const user = await signInCookie(world.url, acme);
    const r = await world.get(user, "/operator/audit");
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`/operator/sign-in?next=${encodeURIComponent("/operator/audit")}`);
  });
});
