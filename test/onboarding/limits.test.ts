import { afterEach, expect, test } from "bun:test";
import type { ManualClock } from "../../src/runtime/clock.ts";
import type { SignedUp } from "../../src/simulator/signup.ts";
import { onSqlite } from "../support/backend.ts";
import { admin } from "../support/harness.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { ErrorEnvelope, SignupView } from "../support/api-json.ts";

// Issue 26, item 4: signup starts are limited per account (a token bucket, in memory with SQLite,
// in Redis in the scale-out mode) and so are its unfinished signups, each refusal its own error,
// given before the platform is asked anything or anything is stored.

const HOUR = 3_600_000;

let t: SignupWorld;
afterEach(() => t.stop());

const oauthCalls = () => t.sim.requests.filter((r) => r.path.endsWith("/oauth/access_token")).length;
const body = (popup: SignedUp, code = popup.code) => ({
  code,
  waba_id: popup.wabaId,
  phone_number_id: popup.phoneNumberId,
  pin: "123456",
});
const count = async (accountId: string) =>
  (await t.world.deps.query(`SELECT id FROM onboardings WHERE account_id = '${accountId}'`)).length;

test("30 quick signups with made-up codes: 5 records and 5 code exchanges, then 409 too_many_signups, then 429 signup_rate_limited", async () => {
  t = await signupWorld();
  const a = await t.account();
  const answers = [];
  for (let i = 0; i < 30; i++)
    answers.push(
      await a.api<SignupView | ErrorEnvelope>("POST", "/api/signups", body(t.sim.signUp(), `AQ-made-up-${i}`)),
    );
  expect(answers.map((r) => r.status)).toEqual([...Array(5).fill(201), ...Array(5).fill(409), ...Array(20).fill(429)]);
  expect(answers[5]!.body).toMatchObject({
    error: {
      type: "ConflictException",
      code: "too_many_signups",
      message: expect.stringContaining("5 unfinished signups"),
    },
  });
  expect(answers[10]!.body).toMatchObject({
    error: { type: "ThrottleException", code: "signup_rate_limited", message: expect.stringContaining("10 an hour") },
  });
  expect(answers[10]!.headers.get("retry-after")).toBe("360");
  expect(oauthCalls()).toBe(5);
  expect(await count(a.id)).toBe(5);
  // Another account has its own bucket and its own allowance.
  expect(
    (await (await t.account()).api<SignupView>("POST", "/api/signups", body(t.sim.signUp(), "AQ-other"))).status,
  ).toBe(201);
});

test("the bucket: retries take from it too; Retry-After says when the next start may come, and it may then", async () => {
  t = await signupWorld({ env: { EMBEDDED_SIGNUP_STARTS_PER_HOUR: "2", EMBEDDED_SIGNUP_MAX_UNFINISHED: "100" } });
  const a = await t.account();
  const first = await a.api<SignupView>("POST", "/api/signups", body(t.sim.signUp(), "AQ-made-up"));
  expect((await a.api<SignupView>("POST", `/api/signups/${first.body.id}/retry`, {})).status).toBe(200);
  const refused = await a.api<SignupView>("POST", "/api/signups", body(t.sim.signUp()));
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("1800");
  expect((await a.api<SignupView>("POST", `/api/signups/${first.body.id}/retry`, {})).status).toBe(429);
  expect(oauthCalls()).toBe(2);
  expect(await count(a.id)).toBe(1);
  // The scale-out mode's buckets refill on Redis's own clock, which a test does not move.
  if (!onSqlite) return;
  (t.world.deps.clock as ManualClock).advance(1_800_000);
  expect((await a.api<SignupView>("POST", "/api/signups", body(t.sim.signUp()))).body.status).toBe("done");
});

test("the cap counts live unfinished signups: finishing one, resuming one's own, expiry and the operator's delete each free a place", async () => {
  t = await signupWorld({ env: { EMBEDDED_SIGNUP_MAX_UNFINISHED: "2", EMBEDDED_SIGNUP_STARTS_PER_HOUR: "100" } });
  const a = await t.account();
  const [n1, n2, n3, n4] = [t.sim.signUp(), t.sim.signUp(), t.sim.signUp(), t.sim.signUp()];
  await a.api<SignupView>("POST", "/api/signups", body(n1, "AQ-made-up-1"));
  const second = await a.api<SignupView>("POST", "/api/signups", body(n2, "AQ-made-up-2"));
  const calls = oauthCalls();
  const full = await a.api<ErrorEnvelope>("POST", "/api/signups", body(n3));
  expect(full.status).toBe(409);
  expect(full.body.error.code).toBe("too_many_signups");
  expect(oauthCalls()).toBe(calls);
  expect(await count(a.id)).toBe(2);

  // Its own number again, with the real code: a resume, not a new signup; done, it is not unfinished.
  expect((await a.api<SignupView>("POST", "/api/signups", body(n1))).body.status).toBe("done");
  expect((await a.api<SignupView>("POST", "/api/signups", body(n3, "AQ-made-up-3"))).status).toBe(201);
  expect((await a.api<SignupView>("POST", "/api/signups", body(n4, "AQ-made-up-4"))).status).toBe(409);
  expect((await admin(t.url, "DELETE", `/admin/onboardings/${second.body.id}`)).status).toBe(200);
  expect((await a.api<SignupView>("POST", "/api/signups", body(n4, "AQ-made-up-4"))).status).toBe(201);
  expect((await a.api<SignupView>("POST", "/api/signups", body(t.sim.signUp(), "AQ-made-up-5"))).status).toBe(409);

  (t.world.deps.clock as ManualClock).advance(HOUR);
  expect((await a.api<SignupView>("POST", "/api/signups", body(t.sim.signUp(), "AQ-made-up-6"))).status).toBe(201);
  expect((await a.api<SignupView>("POST", "/api/signups", body(t.sim.signUp(), "AQ-made-up-7"))).status).toBe(201);
});
