import { afterEach, expect, test } from "bun:test";
import type { SignedUp } from "../../src/simulator/signup.ts";
import { admin } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { SignupView } from "../support/api-json.ts";

// Issue 26: the operator lists and deletes onboarding records (GET /admin/onboardings, DELETE
// /admin/onboardings/{id}, and `switchboard admin onboardings list|delete`), never shown a secret.

let t: SignupWorld;
afterEach(() => t.stop());

const body = (popup: SignedUp, code = popup.code) => ({
  code,
  waba_id: popup.wabaId,
  phone_number_id: popup.phoneNumberId,
  pin: "864213",
});

/** An answer's status and JSON, as the shape the caller reads (`unknown` unless it says). */
async function json<T = unknown>(response: Promise<Response>): Promise<{ status: number; body: T }> {
  const r = await response;
  return { status: r.status, body: (await r.json()) as T };
}

/** The operator's list of onboardings. */
type Listed = { data: Record<string, unknown>[] };

/** `switchboard admin …` against the test's database, as the operator runs it beside the server. */
async function cli(...args: string[]) {
  const { deps } = t.world;
  const env = processEnv("unused", {
    DATABASE_URL: deps.databaseUrl,
    ...(deps.config.redis ? { REDIS_URL: deps.config.redis.url, REDIS_KEY_PREFIX: deps.config.redis.keyPrefix } : {}),
  });
  return runMain(["admin", ...args], env);
}

test("lists by account and number, newest first, without code, token or PIN; deletes one (its number is free again); 404 for an unknown id", async () => {
  t = await signupWorld();
  const [a, b] = [await t.account(), await t.account()];
  const held = t.sim.signUp();
  t.sim.fault(held.wabaId, { error: 100, message: "Temporary failure." }, 1);
  const aSignup = (await a.api<SignupView>("POST", "/api/signups", body(held))).body;
  const done = t.sim.signUp();
  t.world.deps.clock.advance(1000);
  const bSignup = (await b.api<SignupView>("POST", "/api/signups", body(done))).body;
  expect([aSignup.status, bSignup.status]).toEqual(["failed", "done"]);

  expect((await fetch(`${t.url}/admin/onboardings`)).status).toBe(401);
  const all = await json<Listed>(admin(t.url, "GET", "/admin/onboardings"));
  expect(all.status).toBe(200);
  expect(all.body.data.map((o) => o.id)).toEqual([bSignup.id, aSignup.id]);
  expect(all.body.data[1]).toEqual({
    ...aSignup,
    account_id: a.id,
    expires_at: new Date(t.world.deps.clock.now() - 1000 + 3_600_000).toISOString(),
    updated_at: aSignup.created_at,
  });
  expect(all.body.data[0]).toMatchObject({ account_id: b.id, status: "done", expires_at: null });
  const text = JSON.stringify(all.body);
  for (const secret of [held.code, done.code, t.sim.world.wabas.get(held.wabaId)!.accessToken, "864213"])
    expect(text).not.toContain(secret);

  expect(
    (await json<Listed>(admin(t.url, "GET", `/admin/onboardings?account_id=${a.id}`))).body.data.map((o) => o.id),
  ).toEqual([aSignup.id]);
  expect(
    (await json<Listed>(admin(t.url, "GET", `/admin/onboardings?phone_number_id=${done.phoneNumberId}`))).body.data.map(
      (o) => o.id,
    ),
  ).toEqual([bSignup.id]);
  expect(
    (await json(admin(t.url, "GET", `/admin/onboardings?account_id=${a.id}&phone_number_id=${done.phoneNumberId}`)))
      .body,
  ).toEqual({ data: [] });
  expect((await json(admin(t.url, "GET", "/admin/onboardings?account_id=acc_nobody"))).status).toBe(404);

  // A's signup held the number: once deleted, B may sign it up.
  const again = t.sim.signUp({ wabaId: held.wabaId, phoneNumberId: held.phoneNumberId });
  expect((await b.api<SignupView>("POST", "/api/signups", body(again))).status).toBe(409);
  const deleted = await json(admin(t.url, "DELETE", `/admin/onboardings/${aSignup.id}`));
  expect(deleted).toEqual({ status: 200, body: all.body.data[1] });
  expect((await a.api<SignupView>("GET", `/api/signups/${aSignup.id}`)).status).toBe(404);
  expect((await b.api<SignupView>("POST", "/api/signups", body(again))).body.status).toBe("done");
  const gone = await json(admin(t.url, "DELETE", `/admin/onboardings/${aSignup.id}`));
  expect(gone.status).toBe(404);
  expect(gone.body).toMatchObject({
    error: { type: "NotFoundException", code: "not_found", message: `No onboarding ${aSignup.id}.` },
  });
});

test("switchboard admin onboardings list|delete print what the HTTP API answers", async () => {
  t = await signupWorld();
  // The CLI reads the system clock: the server's moves to it, so the record is live for both.
  t.world.deps.clock.set(Date.now());
  const a = await t.account();
  const popup = t.sim.signUp();
  const signup = (await a.api<SignupView>("POST", "/api/signups", body(popup, "AQ-made-up"))).body;
  const listed = await json<Listed>(admin(t.url, "GET", `/admin/onboardings?account_id=${a.id}`));

  const list = await cli("onboardings", "list", "--account-id", a.id);
  expect(list.code).toBe(0);
  expect(JSON.parse(list.stdout)).toEqual(listed.body);
  const byNumber = await cli("onboardings", "list", "--phone-number-id", popup.phoneNumberId);
  expect(JSON.parse(byNumber.stdout)).toEqual(listed.body);

  const deleted = await cli("onboardings", "delete", signup.id);
  expect(deleted.code).toBe(0);
  expect(JSON.parse(deleted.stdout)).toEqual(listed.body.data[0]);
  expect((await json(admin(t.url, "GET", "/admin/onboardings"))).body).toEqual({ data: [] });
  const missing = await cli("onboardings", "delete", signup.id);
  expect(missing.code).toBe(1);
  expect(JSON.parse(missing.stderr).error).toMatchObject({ code: "not_found", message: `No onboarding ${signup.id}.` });
});
