import { afterEach, expect, test } from "bun:test";
import type { ManualClock } from "../../src/runtime/clock.ts";
import { TEST_MESSAGE_TEXT } from "../../src/webhooks/test-event.ts";
import { eventually } from "../support/eventually.ts";
import { receiver, type Receiver } from "../webhooks/support.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { ErrorEnvelope, NewEndpointJson, SignupView, CoexistenceJson } from "../support/api-json.ts";

// Issue 20, item 2: a coexistence number's one-time syncs (contacts, chat history), each held back
// until an endpoint that receives its field answered the pre-flight's test event (docs/webhooks.md#test-events) with a
// 2xx, unless the user insists; once each, within 24 hours of onboarding.

let t: SignupWorld;
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) r.stop();
  await t.stop();
});

async function coexistenceNumber() {
  const acme = await t.account();
  const popup = t.sim.signUp({ coexistence: true });
  const r = await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    coexistence: true,
  });
  expect(r.body.status).toBe("done");
  const hook = receiver(() => new Response("not ready", { status: 503 }));
  receivers.push(hook);
  const endpoint = await acme.api<NewEndpointJson>("POST", "/api/endpoints", {
    url: hook.url,
    fields: ["history", "smb_app_state_sync"],
  });
  expect(endpoint.status).toBe(201);
  const view = async () =>
    (await acme.api<CoexistenceJson>("GET", `/api/numbers/${popup.phoneNumberId}/coexistence`)).body;
  const history = async () => (await view()).syncs.find((s) => s.sync_type === "history")!;
  return { acme, popup, hook, endpointId: endpoint.body.id, view, history };
}

test("the history sync waits for a pre-flight an endpoint answered 2xx; then the platform's history reaches the endpoint, once", async () => {
  t = await signupWorld();
  const { acme, popup, hook, endpointId, history } = await coexistenceNumber();
  // A refusal unless the caller expects the number's syncs.
  const start = <T = ErrorEnvelope>(override?: boolean) =>
    acme.api<T>("POST", `/api/numbers/${popup.phoneNumberId}/smb-sync`, {
      sync_type: "history",
      ...(override === undefined ? {} : { override }),
    });

  const blocked = await start();
  expect(blocked.status).toBe(409);
  expect(blocked.body.error).toMatchObject({
    type: "ConflictException",
    code: "preflight_required",
    message: expect.stringContaining("pre-flight"),
  });
  const preflight = await acme.api("POST", `/api/numbers/${popup.phoneNumberId}/preflight`, { sync_type: "history" });
  expect(preflight.status).toBe(202);
  // The receiver is not ready: its answer is shown, and the sync stays refused.
  expect(await eventually(async () => (await history()).preflight.endpoints[0]?.last_status_code, 503, 5_000)).toBe(
    503,
  );
  const refused = await history();
  expect(refused.preflight).toMatchObject({
    passed: false,
    endpoints: [{ endpoint_id: endpointId, result: "retrying", last_status_code: 503 }],
  });
  expect((await start()).status).toBe(409);
  const test = JSON.parse(hook.received[0]!.body);
  expect(test.proxy_test).toBe(true);
  expect(test.entry[0].changes[0].value.messages[0].id).toStartWith("wamid.proxy_test.");
  expect(test.entry[0].changes[0]).toMatchObject({
    field: "messages",
    value: { messages: [{ type: "text", text: { body: TEST_MESSAGE_TEXT } }] },
  });

  hook.respond(() => new Response("ok"));
  await acme.api("POST", `/api/numbers/${popup.phoneNumberId}/preflight`, { sync_type: "history" });
  expect(await eventually(async () => (await history()).preflight.passed, true, 5_000)).toBe(true);
  const started = await start<CoexistenceJson>();
  expect(started.status).toBe(200);
  expect(started.body.syncs.find((s) => s.sync_type === "history")?.started).toMatchObject({
    overridden: false,
    request_id: expect.any(String),
  });
  const asked = t.sim.requests.find((r) => r.path.endsWith(`/${popup.phoneNumberId}/smb_app_data`))!;
  expect(JSON.parse(new TextDecoder().decode(asked.body))).toEqual({ messaging_product: "chat", sync_type: "history" });

  await t.sim.webhooksIdle();
  const historyEvent = async () =>
    hook.received.map((r) => JSON.parse(r.body)).find((e) => e.entry[0].changes[0].field === "history");
  expect(await eventually(async () => (await historyEvent()) !== undefined, true, 5_000)).toBe(true);
  expect((await historyEvent()).entry[0].changes[0].value.history[0].threads[0].messages[0].history_context).toEqual({
    status: "READ",
  });

  const second = await start();
  expect(second.status).toBe(409);
  expect(second.body.error).toMatchObject({
    type: "ConflictException",
    code: "sync_unavailable",
    message: expect.stringContaining("allows it once"),
  });
});

test("an endpoint already receiving history when a coexistence number is onboarded gets the pre-flight at once", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const first = t.sim.signUp();
  await acme.api<SignupView>("POST", "/api/signups", {
    code: first.code,
    waba_id: first.wabaId,
    phone_number_id: first.phoneNumberId,
    pin: "123456",
  });
  const hook = receiver();
  receivers.push(hook);
  expect((await acme.api("POST", "/api/endpoints", { url: hook.url, fields: ["messages", "history"] })).status).toBe(
    201,
  );

  const popup = t.sim.signUp({ coexistence: true });
  expect(
    (
      await acme.api<SignupView>("POST", "/api/signups", {
        code: popup.code,
        waba_id: popup.wabaId,
        phone_number_id: popup.phoneNumberId,
        coexistence: true,
      })
    ).body.status,
  ).toBe("done");
  const history = async () =>
    (await acme.api<CoexistenceJson>("GET", `/api/numbers/${popup.phoneNumberId}/coexistence`)).body.syncs[1]!;
  expect(await eventually(async () => (await history()).preflight.passed, true, 5_000)).toBe(true);
  // Contacts: no endpoint receives smb_app_state_sync, so nothing was sent for it.
  expect(
    (await acme.api<CoexistenceJson>("GET", `/api/numbers/${popup.phoneNumberId}/coexistence`)).body.syncs[0],
  ).toMatchObject({
    receiving_endpoints: 0,
    preflight: { at: null },
  });
  expect(hook.received.map((r) => JSON.parse(r.body).proxy_test)).toEqual([true]);
});

test("override starts the contacts sync without a passed pre-flight; after 24 hours the platform's window is closed", async () => {
  t = await signupWorld();
  const { acme, popup, view } = await coexistenceNumber();
  const contacts = await acme.api<CoexistenceJson>("POST", `/api/numbers/${popup.phoneNumberId}/smb-sync`, {
    sync_type: "smb_app_state_sync",
    override: true,
  });
  expect(contacts.status).toBe(200);
  expect(contacts.body.syncs[0]?.started).toMatchObject({ overridden: true });
  expect((await view()).window_open).toBe(true);

  (t.world.deps.clock as ManualClock).advance(24 * 3_600_000 + 1);
  const late = await acme.api<ErrorEnvelope>("POST", `/api/numbers/${popup.phoneNumberId}/smb-sync`, {
    sync_type: "history",
    override: true,
  });
  expect(late.status).toBe(409);
  expect(late.body.error).toMatchObject({ code: "sync_unavailable", message: expect.stringContaining("24 hours") });
  expect((await view()).syncs.map((s) => s.can_start)).toEqual([false, false]);
});

test("pre-flight: no endpoint receiving the field is a 400 in words; an embedded number is not coexistence; another account's number is 404", async () => {
  t = await signupWorld();
  const acme = await t.account();
  const popup = t.sim.signUp({ coexistence: true });
  await acme.api<SignupView>("POST", "/api/signups", {
    code: popup.code,
    waba_id: popup.wabaId,
    phone_number_id: popup.phoneNumberId,
    coexistence: true,
  });
  const none = await acme.api<ErrorEnvelope>("POST", `/api/numbers/${popup.phoneNumberId}/preflight`, {
    sync_type: "history",
  });
  expect(none.status).toBe(400);
  expect(none.body.error.message).toContain("No enabled endpoint receives history events");

  const embedded = t.sim.signUp();
  await acme.api<SignupView>("POST", "/api/signups", {
    code: embedded.code,
    waba_id: embedded.wabaId,
    phone_number_id: embedded.phoneNumberId,
    pin: "123456",
  });
  expect(
    (
      await acme.api<ErrorEnvelope>("POST", `/api/numbers/${embedded.phoneNumberId}/preflight`, {
        sync_type: "history",
      })
    ).body.error.message,
  ).toContain("not a coexistence number");

  const other = await t.account();
  expect((await other.api("GET", `/api/numbers/${popup.phoneNumberId}/coexistence`)).status).toBe(404);
  expect(
    (await other.api("POST", `/api/numbers/${popup.phoneNumberId}/smb-sync`, { sync_type: "history", override: true }))
      .status,
  ).toBe(404);
});
