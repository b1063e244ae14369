import { afterEach, expect, test } from "bun:test";
import { RUN_LEASE_MS } from "../../src/onboarding/steps.ts";
import type { ManualClock } from "../../src/runtime/clock.ts";
import { eventually } from "../support/eventually.ts";
import { admin } from "../support/harness.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { ErrorEnvelope, ListJson, NumberJson, SignupView } from "../support/api-json.ts";

// Issue 20, item 1: Embedded Signup's server steps against the simulator's platform: the code
// exchanged for the business's token, the app subscribed to the WABA, the number registered with
// the user's PIN, read and stored; each failure says which step and why, and a retry resumes there.

let t: SignupWorld;
afterEach(() => t.stop());

const oauthCalls = () => t.sim.requests.filter((r) => r.path.endsWith("/oauth/access_token")).length;

test("a signup exchanges the code, subscribes, registers with the PIN, reads the number and stores both (token sealed, the service's app)", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp({ verifiedName: "Acme Sales" });
  const r = await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    pin: "246810",
  });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe("done");
  expect(r.body.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
    ["exchange", "done"],
    ["subscribe", "done"],
    ["register", "done"],
    ["sync", "done"],
    ["save", "done"],
  ]);
  const simWaba = t.sim.world.wabas.get(popup.wabaId)!;
  const waba = t.world.deps.store.directory.waba(popup.wabaId)!;
  expect(waba).toMatchObject({
    accountId: acme.id,
    accessToken: simWaba.accessToken,
    appSecret: null,
    status: "connected",
  });
  expect(t.sim.world.subscribed.has(popup.wabaId)).toBe(true);
  expect(t.sim.world.registered.get(popup.phoneNumberId)).toBe("246810");
  const numbers = await acme.api<ListJson<NumberJson>>("GET", "/api/numbers");
  expect(numbers.body.data).toEqual([
    expect.objectContaining({
      phone_number_id: popup.phoneNumberId,
      kind: "embedded",
      verified_name: "Acme Sales",
      usable: true,
    }),
  ]);
  // What a finished onboarding keeps: no code, token or PIN; the code's hash, to know it if it comes again.
  const kept = (await t.world.deps.store.onboardings.byNumber(acme.id, popup.phoneNumberId, t.world.deps.clock.now()))!;
  expect(kept).toMatchObject({
    code: null,
    codeHash: new Bun.CryptoHasher("sha256").update(popup.code).digest("hex"),
    pin: null,
    accessToken: null,
    expiresAt: null,
  });
  const [raw] = await t.world.deps.query(
    `SELECT code_enc, access_token_enc, pin_enc FROM onboardings WHERE phone_number_id = '${popup.phoneNumberId}'`,
  );
  expect(raw).toEqual({ code_enc: null, access_token_enc: null, pin_enc: null });
  // The number works through the proxy with the token the signup gave.
  const key = await t.world.key(acme.id, "live");
  const sent = await t.world.call(`/v21.0/${popup.phoneNumberId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });
  expect(sent.status).toBe(200);
});

test("a failure at each step says which and why; each retry resumes at the failed step, and nothing is created twice", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp();
  const body = { code: popup.code, waba_id: popup.wabaId, phone_number_id: popup.phoneNumberId, pin: "135790" };
  const failedStep = (view: { steps: { status: string }[] }) => view.steps.find((s) => s.status === "failed");

  t.sim.fault("oauth", { error: 100, message: "Temporary OAuth failure." }, 1);
  let view = (await acme.api<SignupView>("POST", "/api/signups", body)).body;
  expect(view.status).toBe("failed");
  expect(failedStep(view)).toMatchObject({
    name: "exchange",
    error: {
      code: 100,
      reason: expect.stringContaining("Temporary OAuth failure."),
      advice: expect.stringContaining("works once"),
    },
  });
  expect(t.world.deps.store.directory.waba(popup.wabaId)).toBeUndefined();

  const retry = async () => (await acme.api<SignupView>("POST", `/api/signups/${view.id}/retry`, {})).body;
  t.sim.fault(popup.wabaId, { error: 190 }, 1);
  view = await retry();
  expect(failedStep(view)).toMatchObject({ name: "subscribe", error: { code: 190 } });
  expect(view.steps[0]).toMatchObject({ name: "exchange", status: "done" });

  // The number already has two-step verification with another PIN: the platform refuses this one.
  t.sim.world.registered.set(popup.phoneNumberId, "999999");
  view = await retry();
  expect(failedStep(view)).toMatchObject({
    name: "register",
    error: { reason: expect.stringContaining("PIN Mismatch"), advice: expect.stringContaining("PIN") },
  });

  // Retried with the right PIN: registered; then the read fails.
  t.sim.fault(`GET ${popup.phoneNumberId}`, { error: 131031 }, 1);
  await admin(t.url, "PATCH", `/admin/accounts/${acme.id}`, { max_numbers: 0 });
  view = (await acme.api<SignupView>("POST", `/api/signups/${view.id}/retry`, { pin: "999999" })).body;
  expect(view.steps[2]).toMatchObject({ name: "register", status: "done" });
  expect(failedStep(view)).toMatchObject({ name: "sync", error: { code: 131031 } });

  view = await retry();
  expect(failedStep(view)).toMatchObject({ name: "save", error: { reason: "The account's plan allows 0 number(s)." } });
  await admin(t.url, "PATCH", `/admin/accounts/${acme.id}`, { max_numbers: null });
  view = await retry();
  expect(view.status).toBe("done");
  expect(failedStep(view)).toBeUndefined();

  // One successful exchange (and the failed one): a retry never spends the code again.
  expect(oauthCalls()).toBe(2);
  expect(t.sim.requests.filter((r) => r.path.endsWith(`/${popup.wabaId}/subscribed_apps`))).toHaveLength(2);
  expect((await acme.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data).toHaveLength(1);
  expect((await acme.api<SignupView>("GET", `/api/signups/${view.id}`)).body).toEqual(view);
});

test("a retry's body is optional, but when there is one it is a JSON object of the retry's fields, else 400 and nothing runs", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp();
  t.sim.fault("oauth", { error: 100, message: "Temporary OAuth failure." }, 1);
  const failed = (
    await acme.api<SignupView>("POST", "/api/signups", {
      code: popup.code,
      waba_id: popup.wabaId,
      phone_number_id: popup.phoneNumberId,
      pin: "135790",
    })
  ).body;
  expect(failed.status).toBe("failed");
  const retry = (body?: string) =>
    fetch(`${t.url}/api/signups/${failed.id}/retry`, {
      method: "POST",
      body,
      headers: {
        cookie: acme.cookie(),
        origin: t.url,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
    });
  for (const body of [
    '{"pin":',
    "[]",
    '["123456"]',
    "1",
    "null",
    '"123456"',
    "true",
    '{"pin":"12"}',
    '{"pin":"123456","code":"x"}',
  ]) {
    const r = await retry(body);
    const answer = (await r.json()) as { error?: { code: string; message: string } };
    expect({ body, status: r.status, code: answer.error?.code }).toEqual({
      body,
      status: 400,
      code: "invalid_request",
    });
    expect(answer.error!.message).not.toBe("");
  }
  expect(oauthCalls()).toBe(1);
  expect((await acme.api("GET", `/api/signups/${failed.id}`)).body).toEqual(failed);
  // No body at all, or an empty one, is a retry without a new PIN.
  const empty = await retry("");
  expect(empty.status).toBe(200);
  expect(((await empty.json()) as { status: string }).status).toBe("done");
  expect((await retry()).status).toBe(200);
});

test("a coexistence number skips registration (it stays on the business app); signing it up again resumes the same onboarding", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp({ coexistence: true });
  const first = await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    coexistence: true,
  });
  expect(first.body.status).toBe("done");
  expect(first.body.steps[2]).toMatchObject({
    name: "register",
    status: "skipped",
    detail: expect.stringContaining("business app"),
  });
  expect(t.sim.world.registered.has(popup.phoneNumberId)).toBe(false);
  expect((await acme.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data).toEqual([
    expect.objectContaining({ kind: "coexistence", rate_limit_per_second: 20 }),
  ]);

  const again = t.sim.signUp({ wabaId: popup.wabaId, phoneNumberId: popup.phoneNumberId, coexistence: true });
  const second = await acme.api<SignupView>("POST", "/api/signups", {
    code: again.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    coexistence: true,
  });
  expect(second.body).toMatchObject({ id: first.body.id, status: "done" });
  expect((await acme.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data).toHaveLength(1);
});

test("the same signup sent twice at once (a double submit) runs once: one code exchange, one number", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp();
  const body = { code: popup.code, waba_id: popup.wabaId, phone_number_id: popup.phoneNumberId, pin: "123456" };
  const answers = await Promise.all([
    acme.api<SignupView | ErrorEnvelope>("POST", "/api/signups", body),
    acme.api<SignupView | ErrorEnvelope>("POST", "/api/signups", body),
  ]);
  // The second either found the first still running (409, in words) or found it done.
  for (const answer of answers) {
    if (answer.status === 409)
      expect(answer.body).toMatchObject({ error: { message: expect.stringContaining("running already") } });
    else expect(answer.body).toMatchObject({ status: "done" });
  }
  expect(answers.some((a) => a.status === 201 && "status" in a.body && a.body.status === "done")).toBe(true);
  expect(oauthCalls()).toBe(1);
  const again = await acme.api<SignupView>("POST", "/api/signups", body);
  expect(again.body.status).toBe("done");
  expect(oauthCalls()).toBe(1);
  expect((await acme.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data).toHaveLength(1);
});

test("a revoked token says to connect with the platform again; doing so gives the WABA the new token and the number works again", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp();
  await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    pin: "123456",
  });
  const key = await t.world.key(acme.id, "live");
  const send = () =>
    t.world.call(`/v21.0/${popup.phoneNumberId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
    });
  t.sim.fault(popup.phoneNumberId, { error: 190 }, 1);
  expect((await send()).status).toBe(401);
  const number = async () => (await acme.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data[0]!;
  expect(await eventually(async () => (await number()).waba_status, "token_revoked")).toBe("token_revoked");
  expect((await number()).action).toContain("Connect with the platform again for this number");

  const again = t.sim.signUp({ wabaId: popup.wabaId, phoneNumberId: popup.phoneNumberId });
  expect(
    (
      await acme.api<SignupView>("POST", "/api/signups", {
        code: again.code,
        waba_id: popup.wabaId,
        phone_number_id: popup.phoneNumberId,
        pin: "123456",
      })
    ).body.status,
  ).toBe("done");
  expect(await number()).toMatchObject({ usable: true, waba_status: "connected", cause: null });
  expect(t.world.deps.store.directory.waba(popup.wabaId)!.accessToken).toBe(
    t.sim.world.wabas.get(popup.wabaId)!.accessToken,
  );
  expect((await send()).status).toBe(200);
});

test("an unregistered number says signing up again registers it with the PIN, and it does", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp();
  await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    pin: "123456",
  });
  t.sim.fault(popup.phoneNumberId, { error: 133010 }, 1);
  expect((await acme.api<NumberJson>("POST", `/api/numbers/${popup.phoneNumberId}/sync`)).body).toMatchObject({
    status: "not_registered",
    action: expect.stringContaining("registers it with your PIN"),
  });
  t.sim.world.registered.delete(popup.phoneNumberId);
  const again = t.sim.signUp({ wabaId: popup.wabaId, phoneNumberId: popup.phoneNumberId });
  expect(
    (
      await acme.api<SignupView>("POST", "/api/signups", {
        code: again.code,
        waba_id: popup.wabaId,
        phone_number_id: popup.phoneNumberId,
        pin: "654321",
      })
    ).body.status,
  ).toBe("done");
  expect(t.sim.world.registered.get(popup.phoneNumberId)).toBe("654321");
  expect((await acme.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data[0]).toMatchObject({
    status: "connected",
    usable: true,
  });
});

test("a run cut off midway (the server went down) holds its lease until it runs out; then Try again finishes it without a second exchange", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp();
  const clock = t.world.deps.clock as ManualClock;
  const now = clock.now();
  // What a run leaves when its process dies after the exchange: the token, the step done, the lease held.
  await t.world.deps.store.onboardings.create(
    {
      id: "sgn_cut",
      accountId: acme.id,
      phoneNumberId: popup.phoneNumberId,
      wabaId: popup.wabaId,
      kind: "embedded",
      code: null,
      codeHash: null,
      accessToken: t.sim.world.wabas.get(popup.wabaId)!.accessToken,
      pin: "123456",
      steps: { exchange: { status: "done", at: now } },
      preflights: {},
      syncs: {},
      finishedAt: null,
      leaseUntil: now + RUN_LEASE_MS,
      expiresAt: now + 3_600_000,
      createdAt: now,
      updatedAt: now,
    },
    { now, numberIsTheirs: false },
  );
  const page = await (
    await fetch(`${t.url}/dashboard/numbers/signups/sgn_cut`, { headers: { cookie: acme.cookie() } })
  ).text();
  expect(page).toContain("stopped before it finished");
  expect(page).toContain("Try again");
  const early = await acme.api<ErrorEnvelope>("POST", "/api/signups/sgn_cut/retry", {});
  expect(early.status).toBe(409);
  expect(early.body.error.message).toContain("running already");

  clock.advance(RUN_LEASE_MS);
  const done = await acme.api<SignupView>("POST", "/api/signups/sgn_cut/retry", {});
  expect(done.body.status).toBe("done");
  expect(oauthCalls()).toBe(0);
  expect(t.sim.world.registered.get(popup.phoneNumberId)).toBe("123456");
  const unfinished = await (await fetch(`${t.url}/dashboard/numbers`, { headers: { cookie: acme.cookie() } })).text();
  expect(unfinished).not.toContain("Unfinished signups");
});

test("plan limit: 409 plan_limit before the platform is asked anything; a PIN is required for a new number", async () => {
  t = await signupWorld();
  const full = await t.account({ maxNumbers: 0 });
  const popup = t.sim.signUp();
  const refused = await full.api<ErrorEnvelope>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    pin: "123456",
  });
  expect(refused.status).toBe(409);
  expect(refused.body.error).toMatchObject({ type: "ConflictException", code: "plan_limit" });
  const noPin = await (await t.account()).api<ErrorEnvelope>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
  });
  expect(noPin.status).toBe(400);
  expect(noPin.body.error.message).toContain("6-digit PIN");
  expect(oauthCalls()).toBe(0);
});

test("another account: a signup's id is 404 to it, and a number connected by one account is a 409 for the other", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const other = await t.account();
  const popup = t.sim.signUp();
  const done = await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    pin: "123456",
  });
  expect((await other.api<SignupView>("GET", `/api/signups/${done.body.id}`)).status).toBe(404);
  expect((await other.api<SignupView>("POST", `/api/signups/${done.body.id}/retry`, {})).status).toBe(404);
  const again = t.sim.signUp({ wabaId: popup.wabaId, phoneNumberId: popup.phoneNumberId });
  const taken = await other.api<ErrorEnvelope>("POST", "/api/signups", {
    code: again.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    pin: "123456",
  });
  expect(taken.status).toBe(409);
  expect(taken.body.error.code).toBe("conflict");
});

test("without EMBEDDED_SIGNUP_APP_ID and EMBEDDED_SIGNUP_CONFIG_ID the signup API answers 404 in words", async () => {
  t = await signupWorld({ signup: false });
  const acme = await t.account();
  const r = await acme.api<ErrorEnvelope>("POST", "/api/signups", {
    code: "x",
    waba_id: "1",
    phone_number_id: "2",
    pin: "123456",
  });
  expect(r.status).toBe(404);
  expect(r.body.error.message).toContain("EMBEDDED_SIGNUP_APP_ID");
});
