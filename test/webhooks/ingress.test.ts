import { afterEach, describe, expect, test } from "bun:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { onSqlite } from "../support/backend.ts";
import { TEST_APP_SECRET } from "../support/harness.ts";
import { manualSync, settledFlags } from "../support/manual-sync.ts";
import { eventBody, messageChange, relayApp, type RelayApp } from "./support.ts";

let app: RelayApp;
afterEach(() => app?.close());

const count = async (app: RelayApp, table: "events" | "deliveries") =>
  (await app.deps.query(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n;

/** How many acknowledgements the ack-latency histogram of /metrics has timed. */
const timedAcks = async (app: RelayApp) => {
  const metric = await app.deps.metrics.webhookAckLatency.get();
  return metric.values.find((v) => v.metricName === "switchboard_webhook_ack_seconds_count")?.value ?? 0;
};

describe("subscription handshake (docs/webhooks.md#intake)", () => {
  test("the right verify token gets the challenge back; anything else 403", async () => {
    app = await relayApp();
    const ok = await fetch(
      `${app.url}/webhooks/upstream?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=12345`,
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("12345");
    for (const query of [
      "hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1",
      "hub.mode=other&hub.verify_token=verify-me&hub.challenge=1",
      "hub.mode=subscribe&hub.challenge=1",
    ]) {
      const refused = await fetch(`${app.url}/webhooks/upstream?${query}`);
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.code).toBe("verify_token_mismatch");
    }
  });
});

describe("X-Hub-Signature-256", () => {
  test("missing or wrong signature: 401 and nothing is kept", async () => {
    app = await relayApp();
    const a = await app.account();
    await a.endpoint(app.receiver().url);
    const body = eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]);
    for (const secret of [null, "wrong-secret"]) {
      const response = await app.post(body, secret);
      expect(response.status).toBe(401);
      expect((await response.json()).error.code).toBe("invalid_signature");
    }
    const tampered = await fetch(`${app.url}/webhooks/upstream`, {
      method: "POST",
      headers: { "x-hub-signature-256": hubSignature(TEST_APP_SECRET, new TextEncoder().encode(body)) },
      body: body.replace("hi", "ho"),
    });
    expect(tampered.status).toBe(401);
    expect(await count(app, "events")).toBe(0);
    expect(await count(app, "deliveries")).toBe(0);
    expect(await timedAcks(app)).toBe(0);
  });

  test("an accepted event and its deliveries are stored before the 200", async () => {
    app = await relayApp();
    const a = await app.account();
    const rx = app.receiver(() => new Response("no", { status: 500 }));
    await a.endpoint(rx.url);
    await a.endpoint(`${rx.url}?second`);
    const response = await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    expect(response.status).toBe(200);
    expect(await count(app, "events")).toBe(1);
    expect(await count(app, "deliveries")).toBe(2);
    expect(await timedAcks(app)).toBe(1);
  });

  test("a BYO app's signature speaks only for WABAs using that app secret: other accounts' entries are dropped", async () => {
    app = await relayApp();
    const byo = await app.account({ kind: "byo", appSecret: "byo-app-secret" });
    const victim = await app.account();
    const [rxByo, rxVictim] = [app.receiver(), app.receiver()];
    await byo.endpoint(rxByo.url);
    await victim.endpoint(rxVictim.url);
    const mine = JSON.stringify({ id: byo.wabaId, changes: [messageChange(byo.numbers[0]!)] });
    const injected = JSON.stringify({ id: victim.wabaId, changes: [messageChange(victim.numbers[0]!, "forged")] });
    const body = `{"object":"whatsapp_business_account","entry":[${mine},${injected}]}`;
    expect((await app.post(body, "byo-app-secret")).status).toBe(200);
    await app.tick();
    expect(rxVictim.received).toHaveLength(0);
    expect(rxByo.received.map((r) => r.body)).toEqual([`{"object":"whatsapp_business_account","entry":[${mine}]}`]);
    expect(app.deps.logger.lines.filter((l) => l.msg === "webhook entries dropped")).toEqual([
      expect.objectContaining({
        entries: 1,
        unknown_waba: 0,
        signed_by_another_app: 1,
        first_waba_ids: [victim.wabaId],
      }),
    ]);

    // Only its own entries: byte for byte, with the signature upstream made.
    const own = `{"object":"whatsapp_business_account","entry":[${mine}]}`;
    expect((await app.post(own, "byo-app-secret")).status).toBe(200);
    await app.tick();
    expect(rxByo.received[1]!.body).toBe(own);
    expect(rxByo.received[1]!.headers["x-upstream-signature-256"]).toBe(
      hubSignature("byo-app-secret", new TextEncoder().encode(own)),
    );

    // The service's APP_SECRET is trusted for every entry.
    expect((await app.post(body)).status).toBe(200);
    await app.tick();
    expect(rxVictim.received).toHaveLength(1);
  });
});

// SQLite's own machinery: the flush of its WAL that each ack waits for (PostgreSQL commits are
// durable when they return: the backend's own tests cover its 503 when nothing could be committed).
describe("entries that are dropped", () => {
  test("thousands of entries of unknown WABAs in one signed event make one summary line: how many, the first few ids", async () => {
    app = await relayApp();
    const a = await app.account();
    const rx = app.receiver();
    await a.endpoint(rx.url);
    const unknown = Array.from({ length: 5_000 }, (_, i) => ({ id: `stranger-${i}`, changes: [messageChange("x")] }));
    const before = app.deps.logger.lines.length;
    expect(
      (await app.post(eventBody([...unknown, { id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]))).status,
    ).toBe(200);
    const warnings = app.deps.logger.lines.slice(before).filter((l) => l.level === "warn");
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: "webhook entries dropped",
        entries: 5_000,
        unknown_waba: 5_000,
        signed_by_another_app: 0,
        first_waba_ids: ["stranger-0", "stranger-1", "stranger-2", "stranger-3", "stranger-4"],
      }),
    ]);
    await app.tick();
    expect(rx.received).toHaveLength(1);
  });
});

describe.skipIf(!onSqlite)("durable before the 200 (docs/webhooks.md#intake)", () => {
  /** An app whose WAL syncs the test finishes by hand, and an event posted to it whose commit is waiting for one. */
  async function eventAwaitingSync() {
    const disk = manualSync();
    app = await relayApp({ store: { syncWal: disk.sync } });
    const a = await app.account();
    const rx = app.receiver();
    await a.endpoint(rx.url);
    const answer = app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    expect(await disk.startedCount(1)).toBe(1);
    return { disk, answer, rx };
  }

  test("waiting for the queue to be idle while an event waits for the disk lets the event loop turn, and ends once it is delivered", async () => {
    const { disk, answer, rx } = await eventAwaitingSync();
    // Its delivery is buffered, waiting for the commit; nothing else is going on.
    const idle = app.relay.dispatcher.drain();
    const done = settledFlags([idle]);
    // These turns never came while drain() looped on settled promises: a sync could not end either.
    for (let i = 0; i < 50; i++) await nextTurn();
    expect(done).toEqual([false]);

    await disk.finish();
    await idle;
    expect((await answer).status).toBe(200);
    expect(rx.received).toHaveLength(1);
  });

  test("an event is acknowledged only once its commit is on disk, not when it is committed", async () => {
    const { disk, answer } = await eventAwaitingSync();
    const answered = settledFlags([answer]);
    // Committed (the process could die now and keep it), but not yet safe from a power cut.
    expect(await count(app, "events")).toBe(1);
    const committedAt = performance.now();
    // Another request's whole round trip: an answer the server had already written would be here.
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    expect(answered).toEqual([false]);

    const waited = performance.now() - committedAt;
    await disk.finish();
    expect((await answer).status).toBe(200);
    // The ack's time in /metrics includes its wait for the disk.
    const timed = (await app.deps.metrics.webhookAckLatency.get()).values.find(
      (v) => v.metricName === "switchboard_webhook_ack_seconds_sum",
    )!.value;
    expect(timed * 1000).toBeGreaterThanOrEqual(waited);
  });

  test("a commit that cannot be synced is not acknowledged: 500, logged, so the platform sends it again", async () => {
    const { disk, answer } = await eventAwaitingSync();
    await disk.finish(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    const response = await answer;
    expect(response.status).toBe(500);
    expect((await response.json()).error.code).toBe("internal");
    expect(app.deps.logger.lines.some((line) => line.level === "error" && JSON.stringify(line).includes("EIO"))).toBe(
      true,
    );
  });
});

describe("bad bodies", () => {
  test("not the docs/webhooks.md#the-payload shape: 400, logged, nothing kept", async () => {
    app = await relayApp();
    for (const body of [
      "not json",
      '{"object":"x"}',
      '{"object":"x","entry":[{"id":"1","changes":[{"field":"messages","value":3}]}]}',
    ]) {
      const response = await app.post(body);
      expect(response.status).toBe(400);
      expect((await response.json()).error.code).toBe("invalid_event");
    }
    expect(
      app.deps.logger.lines.filter((l) => l.msg === "webhook event rejected" && l.error === "invalid_event"),
    ).toHaveLength(3);
    expect(await count(app, "events")).toBe(0);
  });

  test("ids and codes no index holds (NUL, 1 MB, past an integer) are relayed but not indexed: 200, never a 500", async () => {
    app = await relayApp();
    const a = await app.account();
    const rx = app.receiver();
    await a.endpoint(rx.url);
    const status = (id: unknown, code: unknown) => ({ id, status: "failed\u0000", errors: [{ code }] });
    const odd = messageChange("pn\u0000x");
    const statuses = [
      status("wamid.\u0000", 1),
      status("x".repeat(1_000_000), 1),
      status("wamid.big", 1e37),
      status("wamid.part", 1.5),
    ];
    const change = { ...odd, value: { ...odd.value, metadata: { phone_number_id: a.numbers[0] }, statuses } };
    for (const changes of [[odd], [change]]) {
      const response = await app.post(eventBody([{ id: a.wabaId, changes }]));
      expect(response.status).toBe(200);
    }
    // The two that fit are indexed, without the code or status no column holds.
    const indexed = await app.deps.query(
      "SELECT message_id, status, error_code FROM event_messages WHERE message_id IN ('wamid.big', 'wamid.part') ORDER BY message_id",
    );
    expect(indexed).toEqual([
      { message_id: "wamid.big", status: null, error_code: null },
      { message_id: "wamid.part", status: null, error_code: null },
    ]);
    expect(await count(app, "events")).toBe(2);
  });

  test("over 10 MB: 413, whether declared or streamed without a length", async () => {
    app = await relayApp();
    const big = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20);
    const declared = await app.post(big);
    expect(declared.status).toBe(413);
    const envelope = await declared.json();
    expect(envelope.error).toMatchObject({
      type: "InvalidRequestException",
      code: "event_too_large",
      message: "The webhook event exceeds 10 MB.",
    });
    expect(envelope.error.trace_id).toBe(declared.headers.get("x-proxy-request-id")!);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 11; i++) controller.enqueue(new Uint8Array(1024 * 1024).fill(0x20));
        controller.close();
      },
    });
    // The server answers before the upload ends; abort the rest so the connection closes.
    const upload = new AbortController();
    const chunked = await fetch(`${app.url}/webhooks/upstream`, {
      method: "POST",
      body: stream,
      headers: { "x-hub-signature-256": "sha256=00" },
      signal: upload.signal,
    });
    expect(chunked.status).toBe(413);
    upload.abort();
  });
});
