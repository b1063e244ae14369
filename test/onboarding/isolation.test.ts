import { afterEach, expect, test } from "bun:test";
import type { ManualClock } from "../../src/runtime/clock.ts";
import type { SignedUp } from "../../src/simulator/signup.ts";
import { admin, TEST_APP_SECRET } from "../support/harness.ts";
import { receiver, type Receiver } from "../webhooks/support.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { ErrorEnvelope, ListJson, NumberJson, SignupView, CoexistenceJson } from "../support/api-json.ts";

// Issue 26, items 1-3: a signup's record belongs to one account. Its retry never writes over a WABA
// another account owns; a made-up code holds no number; a signup past the code exchange holds its
// number for the code's lifetime only; a coexistence number's syncs land in its own account's record.

const HOUR = 3_600_000;

let t: SignupWorld;
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) r.stop();
  await t.stop();
});

type Account = Awaited<ReturnType<SignupWorld["account"]>>;
const oauthCalls = () => t.sim.requests.filter((r) => r.path.endsWith("/oauth/access_token")).length;
const body = (popup: SignedUp, code = popup.code) => ({
  code,
  waba_id: popup.wabaId,
  phone_number_id: popup.phoneNumberId,
  pin: "123456",
});
const clock = () => t.world.deps.clock as ManualClock;
const rows = (phoneNumberId: string) =>
  t.world.deps.query(`SELECT id, account_id FROM onboardings WHERE phone_number_id = '${phoneNumberId}'`);

/** Account A's signup of a new number, failed after the code exchange (its subscription refused): A holds the number. */
async function failedAfterExchange(a: Account) {
  const popup = t.sim.signUp();
  t.sim.fault(popup.wabaId, { error: 100, message: "Temporary failure." }, 1);
  const r = await a.api<SignupView>("POST", "/api/signups", body(popup));
  expect(r.body).toMatchObject({
    status: "failed",
    steps: [{ name: "exchange", status: "done" }, { name: "subscribe", status: "failed" }, {}, {}, {}],
  });
  return { popup, id: r.body.id as string };
}

const wabaOf = (wabaId: string) => t.world.deps.store.directory.waba(wabaId);

/** The WABA as account B had it, then A's retry: refused, and B's WABA exactly as it was. */
async function retryLeavesAlone(a: Account, signupId: string, wabaId: string) {
  const before = wabaOf(wabaId)!;
  const retried = await a.api<ErrorEnvelope>("POST", `/api/signups/${signupId}/retry`, {});
  expect(wabaOf(wabaId)).toEqual(before);
  expect(retried.status).toBe(409);
  expect(retried.body.error).toMatchObject({
    type: "ConflictException",
    code: "conflict",
    message: `WABA ${wabaId} is already connected.`,
  });
  expect((await a.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data).toEqual([]);
  expect((await a.api<SignupView>("GET", `/api/signups/${signupId}`)).body.status).toBe("failed");
}

test("item 1: a retry never writes over a WABA the operator then connected to another account, disconnected", async () => {
  t = await signupWorld();
  const [a, b] = [await t.account(), await t.account()];
  const { popup, id } = await failedAfterExchange(a);
  expect(
    (
      await admin(t.url, "POST", `/admin/accounts/${b.id}/wabas`, {
        waba_id: popup.wabaId,
        access_token: "EAAG-b-operator",
      })
    ).status,
  ).toBe(201);
  expect((await admin(t.url, "PATCH", `/admin/wabas/${popup.wabaId}`, { status: "disconnected" })).status).toBe(200);
  await retryLeavesAlone(a, id, popup.wabaId);
  expect(wabaOf(popup.wabaId)).toMatchObject({
    accountId: b.id,
    accessToken: "EAAG-b-operator",
    status: "disconnected",
  });
});

test("item 1: a retry never writes over a WABA another account connected as its own (BYO), its token revoked", async () => {
  t = await signupWorld();
  const [a, b] = [await t.account(), await t.account()];
  const { popup, id } = await failedAfterExchange(a);
  const token = t.sim.world.wabas.get(popup.wabaId)!.accessToken;
  const other = t.sim.signUp({ wabaId: popup.wabaId });
  t.sim.world.wabas.get(popup.wabaId)!.accessToken = token;
  const byo = await b.api("POST", "/api/numbers", {
    waba_id: popup.wabaId,
    phone_number_id: other.phoneNumberId,
    access_token: token,
    app_secret: TEST_APP_SECRET,
  });
  expect(byo.status).toBe(201);
  expect((await admin(t.url, "PATCH", `/admin/wabas/${popup.wabaId}`, { status: "token_revoked" })).status).toBe(200);
  await retryLeavesAlone(a, id, popup.wabaId);
  expect(wabaOf(popup.wabaId)).toMatchObject({
    accountId: b.id,
    accessToken: token,
    appSecret: TEST_APP_SECRET,
    status: "token_revoked",
  });
});

test("item 1: a retry never writes over a WABA another account signed up with another of its numbers", async () => {
  t = await signupWorld();
  const [a, b] = [await t.account(), await t.account()];
  const { popup, id } = await failedAfterExchange(a);
  const other = t.sim.signUp({ wabaId: popup.wabaId });
  expect((await b.api<SignupView>("POST", "/api/signups", body(other))).body.status).toBe("done");
  const bToken = wabaOf(popup.wabaId)!.accessToken;
  expect((await admin(t.url, "PATCH", `/admin/wabas/${popup.wabaId}`, { status: "token_revoked" })).status).toBe(200);
  await retryLeavesAlone(a, id, popup.wabaId);
  expect(wabaOf(popup.wabaId)).toMatchObject({ accountId: b.id, accessToken: bToken, status: "token_revoked" });
});

test("item 1: the save step checks again inside its write: a WABA taken while the steps ran is refused, nothing written", async () => {
  let during: (() => Promise<void>) | null = null;
  t = await signupWorld({
    deps: {
      // The number's read (the step before the save) is where the other account takes the WABA.
      fetch: async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        const hook = during;
        if (hook && (init?.method ?? "GET") === "GET" && !url.includes("oauth")) {
          during = null;
          await hook();
        }
        return fetch(input, init);
      },
    },
  });
  const [a, b] = [await t.account(), await t.account()];
  const popup = t.sim.signUp();
  during = async () => {
    expect(
      (await admin(t.url, "POST", `/admin/accounts/${b.id}/wabas`, { waba_id: popup.wabaId, access_token: "EAAG-b" }))
        .status,
    ).toBe(201);
  };
  const r = await a.api<SignupView>("POST", "/api/signups", body(popup));
  expect(during).toBeNull();
  expect(r.body.status).toBe("failed");
  expect(r.body.steps[4]).toMatchObject({
    name: "save",
    status: "failed",
    error: { reason: `WABA ${popup.wabaId} is already connected.` },
  });
  expect(wabaOf(popup.wabaId)).toMatchObject({ accountId: b.id, accessToken: "EAAG-b", status: "connected" });
  expect(t.world.deps.store.directory.number(popup.phoneNumberId)).toBeUndefined();
});

test("item 2: a made-up code holds nothing: another account signs the number up at once, and the made-up record is gone", async () => {
  t = await signupWorld();
  const [squatter, owner] = [await t.account(), await t.account()];
  const popup = t.sim.signUp();
  const made = await squatter.api<SignupView>("POST", "/api/signups", body(popup, "AQ-made-up"));
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({
    status: "failed",
    steps: [{ name: "exchange", status: "failed" }, {}, {}, {}, {}],
  });
  const real = await owner.api<SignupView>("POST", "/api/signups", body(popup));
  expect(real.status).toBe(201);
  expect(real.body.status).toBe("done");
  expect(t.world.deps.store.directory.number(popup.phoneNumberId)?.accountId).toBe(owner.id);
  expect((await squatter.api<SignupView>("GET", `/api/signups/${made.body.id}`)).status).toBe(404);
  expect((await squatter.api<SignupView>("POST", `/api/signups/${made.body.id}/retry`, {})).status).toBe(404);
  expect(await rows(popup.phoneNumberId)).toEqual([{ id: real.body.id, account_id: owner.id }]);
});

test("item 2: a signup past the code exchange holds its number for an hour only; then it expires, its secrets with it", async () => {
  t = await signupWorld();
  const [a, b] = [await t.account(), await t.account()];
  const { popup, id } = await failedAfterExchange(a);
  const again = t.sim.signUp({ wabaId: popup.wabaId, phoneNumberId: popup.phoneNumberId });
  const calls = oauthCalls();
  const held = await b.api<ErrorEnvelope>("POST", "/api/signups", body(again));
  expect(held.status).toBe(409);
  expect(held.body.error).toMatchObject({
    type: "ConflictException",
    code: "conflict",
    message: `Number ${popup.phoneNumberId} is being connected by another account.`,
  });
  expect(oauthCalls()).toBe(calls);

  clock().advance(HOUR - 1);
  expect((await b.api<SignupView>("POST", "/api/signups", body(again))).status).toBe(409);
  expect((await a.api<SignupView>("GET", `/api/signups/${id}`)).status).toBe(200);
  clock().advance(1);
  // Expired: gone for its account too, and the number free.
  expect((await a.api<SignupView>("GET", `/api/signups/${id}`)).status).toBe(404);
  expect((await a.api<SignupView>("POST", `/api/signups/${id}/retry`, {})).status).toBe(404);
  // The retention purge deletes it with its sealed code, token and PIN.
  await t.world.app().retention.run();
  expect(await rows(popup.phoneNumberId)).toEqual([]);
  const done = await b.api<SignupView>("POST", "/api/signups", body(again));
  expect(done.body.status).toBe("done");
  expect(await rows(popup.phoneNumberId)).toEqual([{ id: done.body.id, account_id: b.id }]);
});

test("item 2: a coexistence number the operator connected to its account: its pre-flights go to that account's record, never a squatter's", async () => {
  t = await signupWorld();
  const [squatter, owner] = [await t.account(), await t.account()];
  const popup = t.sim.signUp({ coexistence: true });
  const made = await squatter.api<SignupView>("POST", "/api/signups", {
    ...body(popup, "AQ-made-up"),
    coexistence: true,
  });
  expect(made.body.status).toBe("failed");
  expect(
    (
      await admin(t.url, "POST", `/admin/accounts/${owner.id}/wabas`, {
        waba_id: popup.wabaId,
        access_token: t.sim.world.wabas.get(popup.wabaId)!.accessToken,
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await admin(t.url, "POST", `/admin/accounts/${owner.id}/numbers`, {
        phone_number_id: popup.phoneNumberId,
        waba_id: popup.wabaId,
        kind: "coexistence",
      })
    ).status,
  ).toBe(201);
  const hook = receiver();
  receivers.push(hook);
  expect((await owner.api("POST", "/api/endpoints", { url: hook.url, fields: ["history"] })).status).toBe(201);
  expect(
    (await owner.api("POST", `/api/numbers/${popup.phoneNumberId}/preflight`, { sync_type: "history" })).status,
  ).toBe(202);
  const [record] = await rows(popup.phoneNumberId);
  expect(record!.account_id).toBe(owner.id);
  expect((await squatter.api<SignupView>("GET", `/api/signups/${made.body.id}`)).status).toBe(404);
  expect(
    (await owner.api<CoexistenceJson>("GET", `/api/numbers/${popup.phoneNumberId}/coexistence`)).body.syncs[1]!
      .preflight.at,
  ).not.toBeNull();
});
