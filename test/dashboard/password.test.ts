import { afterAll, beforeAll, expect, test } from "bun:test";
import { createAccount, dashboardWorld, signInCookie, type TestAccount } from "./support.ts";

// Issue 35: a dashboard user changes their own password on the Settings page. The current one is
// required; their other sessions end, this one stays; a refused form says why at the top.

let world: Awaited<ReturnType<typeof dashboardWorld>>;
let acme: TestAccount;
beforeAll(async () => {
  world = await dashboardWorld();
  acme = await createAccount(world.url, "Acme");
});
afterAll(() => world.close());

const post = (cookie: string, form: Record<string, string>) =>
  fetch(`${world.url}/dashboard/settings/password`, {
    method: "POST",
    headers: { cookie, origin: world.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });
const lives = async (cookie: string) =>
  (await fetch(`${world.url}/api/settings`, { headers: { cookie } })).status === 200;

test("the Settings page changes the user's own password: current one required, other sessions end", async () => {
  const here = await signInCookie(world.url, acme);
  const there = await signInCookie(world.url, acme);
  const page = await (await fetch(`${world.url}/dashboard/settings`, { headers: { cookie: here } })).text();
  expect(page).toMatch(/<input[^>]*type="password"[^>]*required[^>]*minlength="10"[^>]*id="new-password"/);

  const short = await post(here, { current_password: acme.password, password: "short" });
  expect(short.status).toBe(400);
  const shortPage = await short.text();
  expect(shortPage).toContain("Your new password was not saved.");
  expect(shortPage).toContain("Must be at least 10 characters long.");

  const wrong = await post(here, { current_password: "not the one", password: "a long new password" });
  expect(wrong.status).toBe(400);
  expect(await wrong.text()).toContain("This is not your current password.");
  expect(await lives(there)).toBe(true);

  const done = await post(here, { current_password: acme.password, password: "a long new password" });
  expect(done.status).toBe(303);
  expect(done.headers.get("location")).toBe("/dashboard/settings?saved=password");
  expect(await lives(here)).toBe(true);
  expect(await lives(there)).toBe(false);
  await signInCookie(world.url, { ...acme, password: "a long new password" });
});
