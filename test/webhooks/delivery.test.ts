import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { eventBody, messageChange, relayApp, type RelayApp } from "./support.ts";
import { smtpSink } from "./smtp-sink.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import type { SignatureScheme } from "../../src/store/endpoints.ts";
import { SIGNATURE_SCHEMES } from "../../src/store/vocabulary.ts";
import { EVENT_FIELDS } from "../../src/webhooks/fields.ts";
import { TEST_MESSAGE_TEXT } from "../../src/webhooks/test-event.ts";
import { deliveryRow, eventRow, LEASED_COUNT } from "../support/queue-rows.ts";
import type { DeliveryDetailJson, DeliveryJson, EndpointJson, ErrorEnvelope, PageJson } from "../support/api-json.ts";

let app: RelayApp;
const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await app?.close();
});

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

async function oneEndpoint(
  respond?: (req: Request) => Response | Promise<Response>,
  fields = ["messages"],
  signature: SignatureScheme = "standard",
) {
  // Keep the manual clock near real time so standardwebhooks' 5-minute tolerance accepts our timestamps.
  app.deps.clock.set(Date.now());
  const a = await app.account();
  const rx = app.receiver(respond);
  const ep = await a.endpoint(rx.url, fields, undefined, signature);
  const send = (text = "hi", field = "messages") =>
    app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!, text, field)] }]));
  return { a, rx, ep, send };
}

describe("delivery request and signature (docs/webhooks.md#the-request-and-its-signature)", () => {
  test("every header as specified; the signature verifies with the standardwebhooks library", async () => {
    app = await relayApp();
    const { a, rx, ep, send } = await oneEndpoint();
    expect((await send()).status).toBe(200);
    await app.tick();
    const [got] = rx.received;
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["user-agent"]).toBe("proxy-webhooks/1");
    expect(got!.headers["webhook-id"]).toMatch(/^msg_[0-9a-z]{24}$/);
    expect(got!.headers["webhook-timestamp"]).toBe(String(Math.floor(app.deps.clock.now() / 1000)));
    expect(got!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got!.headers["x-upstream-signature-256"]).toStartWith("sha256=");
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const verified = new Webhook(ep.secret).verify(got!.body, {
      "webhook-id": got!.headers["webhook-id"]!,
      "webhook-timestamp": got!.headers["webhook-timestamp"]!,
      "webhook-signature": got!.headers["webhook-signature"]!,
    }) as { entry: { id: string }[] };
    expect(verified.entry[0]!.id).toBe(a.wabaId);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(got!.body, {
        "webhook-id": got!.headers["webhook-id"]!,
        "webhook-timestamp": got!.headers["webhook-timestamp"]!,
        "webhook-signature": got!.headers["webhook-signature"]!,
      }),
    ).toThrow();
    const detail = await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${got!.headers["webhook-id"]}`);
    expect(detail.body).toMatchObject({
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
      replay_of: null,
    });
    expect(detail.body.attempts).toEqual([
      {
        number: 1,
        at: new Date(app.deps.clock.now()).toISOString(),
        status_code: 200,
        error: null,
        response_excerpt: "ok",
        duration_ms: expect.any(Number),
      },
    ]);
  });
});

describe.each(SIGNATURE_SCHEMES)(
  "retries (docs/webhooks.md#retries, docs/webhooks.md#delivery-states) [signature %s]",
  (signature) => {
    test("the full schedule without waiting: 8 attempts 5s, 1m, 5m, 30m, 2h, 6h, 12h apart, same webhook-id, signed afresh; the 8th failure parks", async () => {
      app = await relayApp();
      const { a, rx, send } = await oneEndpoint(() => new Response("down", { status: 503 }), ["messages"], signature);
      await send();
      await app.tick();
      expect(rx.received).toHaveLength(1);
      const id = rx.received[0]!.headers["webhook-id"]!;
      const start = app.deps.clock.now();
      let elapsed = 0;
      for (const [i, wait] of [5 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR].entries()) {
        const pending = await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${id}`);
        expect(pending.body.status).toBe("pending");
        expect(pending.body.next_attempt_at).toBe(new Date(start + elapsed + wait).toISOString());
        app.deps.clock.advance(wait - 1);
        await app.tick();
        expect(rx.received).toHaveLength(i + 1);
        app.deps.clock.advance(1);
        await app.tick();
        expect(rx.received).toHaveLength(i + 2);
        elapsed += wait;
      }
      expect(new Set(rx.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([id]));
      expect(new Set(rx.received.map((r) => r.headers["webhook-timestamp"])).size).toBe(8);
      // A platform endpoint's retries carry its own header too, over the same bytes.
      const hub = new Set(rx.received.map((r) => r.headers["x-hub-signature-256"]));
      expect(hub.size).toBe(1);
      expect([...hub][0] !== undefined).toBe(signature === "platform");
      const parked = await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${id}`);
      expect(parked.body).toMatchObject({
        status: "parked",
        parked_reason: "attempts_exhausted",
        attempt_count: 8,
        next_attempt_at: null,
      });
      expect(parked.body.attempts.map((x) => [x.number, x.status_code, x.error])).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 503, "HTTP 503"]),
      );
      app.deps.clock.advance(HOUR);
      await app.tick();
      expect(rx.received).toHaveLength(8);
    });

    test("WEBHOOK_RETRY_SCHEDULE is data: two waits make three attempts", async () => {
      app = await relayApp({ env: { WEBHOOK_RETRY_SCHEDULE: "1s,2s" } });
      const { a, rx, send } = await oneEndpoint(() => new Response("", { status: 500 }), ["messages"], signature);
      await send();
      await app.tick();
      app.deps.clock.advance(SECOND);
      await app.tick();
      app.deps.clock.advance(2 * SECOND);
      await app.tick();
      expect(rx.received).toHaveLength(3);
      const list = await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries?status=parked");
      expect(list.body.data).toHaveLength(1);
    });

    test("a redirect is a failure and is not followed; a later 2xx succeeds and resets the failure count", async () => {
      app = await relayApp();
      const { a, rx, ep, send } = await oneEndpoint(
        () => new Response(null, { status: 301, headers: { location: "http://127.0.0.1:9/elsewhere" } }),
        ["messages"],
        signature,
      );
      await send();
      await app.tick();
      expect((await a.api<EndpointJson>("GET", `/api/endpoints/${ep.id}`)).body.consecutive_failures).toBe(1);
      rx.respond(() => new Response("thanks", { status: 202 }));
      app.deps.clock.advance(5 * SECOND);
      await app.tick();
      const id = rx.received[0]!.headers["webhook-id"];
      const detail = await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${id}`);
      expect(detail.body.status).toBe("succeeded");
      expect(detail.body.attempts.map((x) => x.status_code)).toEqual([301, 202]);
      expect((await a.api<EndpointJson>("GET", `/api/endpoints/${ep.id}`)).body.consecutive_failures).toBe(0);
    });

    test("a receiver slower than WEBHOOK_TIMEOUT_MS fails the attempt (time-out recorded)", async () => {
      app = await relayApp({ env: { WEBHOOK_TIMEOUT_MS: "50" } });
      const { a, rx, send } = await oneEndpoint(() => new Promise<Response>(() => undefined), ["messages"], signature);
      await send();
      await app.tick();
      const detail = await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${rx.received[0]!.headers["webhook-id"]}`);
      expect(detail.body.status).toBe("pending");
      expect(detail.body.attempts[0]).toMatchObject({
        status_code: null,
        error: "timed out after 50 ms",
        response_excerpt: null,
      });
    });
  },
);

describe.each(SIGNATURE_SCHEMES)(
  "endpoint health (docs/webhooks.md#endpoint-health-and-disabling) [signature %s]",
  (signature) => {
    test("410 parks the delivery, disables the endpoint (gone) and emails; a disabled endpoint's due deliveries are parked; Enable resets", async () => {
      const smtp = smtpSink();
      stops.push(smtp.stop);
      app = await relayApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: "relay@example.com" } });
      const { a, rx, ep, send } = await oneEndpoint(
        () => new Response("gone", { status: 410 }),
        ["messages"],
        signature,
      );
      await send();
      await app.tick();
      const first = rx.received[0]!.headers["webhook-id"];
      expect((await a.api("GET", `/api/deliveries/${first}`)).body).toMatchObject({
        status: "parked",
        parked_reason: "gone",
        attempt_count: 1,
      });
      expect((await a.api("GET", `/api/endpoints/${ep.id}`)).body).toMatchObject({
        enabled: false,
        disabled_reason: "gone",
      });
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0]!.data).toContain("Subject: Webhook endpoint disabled");
      expect(smtp.messages[0]!.to[0]).toContain("@example.com");

      // While disabled: nothing is sent, the new delivery parks when due.
      app.deps.clock.advance(SECOND);
      await send();
      await app.tick();
      expect(rx.received).toHaveLength(1);
      const parked = (await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries?status=parked")).body.data;
      expect(parked.map((d) => [d.parked_reason, d.attempt_count])).toEqual([
        ["endpoint_disabled", 0],
        ["gone", 1],
      ]);
      // A replay is made whatever the endpoint's state (docs/webhooks.md#replay); into a disabled one it parks when due.
      const whileDisabled = await a.api<DeliveryJson>("POST", `/api/deliveries/${first}/replay`);
      expect(whileDisabled.status).toBe(201);
      await app.tick();
      expect(rx.received).toHaveLength(1);
      expect((await a.api("GET", `/api/deliveries/${whileDisabled.body.id}`)).body).toMatchObject({
        replay_of: first,
        status: "parked",
        parked_reason: "endpoint_disabled",
        attempt_count: 0,
      });

      rx.respond(() => new Response("ok"));
      expect((await a.api("POST", `/api/endpoints/${ep.id}/enable`)).body).toMatchObject({
        enabled: true,
        disabled_reason: null,
        consecutive_failures: 0,
      });
      await send();
      await app.tick();
      expect(rx.received).toHaveLength(2);
      expect((await a.api("POST", `/api/deliveries/${first}/replay`)).status).toBe(201);
    });

    /** Fails an endpoint's deliveries one by one: a warning at 20, not before; disabled at 50, not at 49. */
    async function failUntilDisabled() {
      const { a, ep, send } = await oneEndpoint(() => new Response("", { status: 500 }), ["messages"], signature);
      for (let i = 0; i < 19; i++) await send();
      await app.tick();
      const notes = () => app.deps.store.notifications.list(a.id);
      expect(await notes()).toHaveLength(0);
      await send();
      await app.tick();
      expect((await notes()).map((n) => n.kind)).toEqual(["endpoint_failing"]);
      for (let i = 0; i < 29; i++) await send();
      await app.tick();
      expect((await a.api("GET", `/api/endpoints/${ep.id}`)).body).toMatchObject({
        enabled: true,
        consecutive_failures: 49,
      });
      await send();
      await app.tick();
      expect((await a.api("GET", `/api/endpoints/${ep.id}`)).body).toMatchObject({
        enabled: false,
        disabled_reason: "consecutive_failures",
        consecutive_failures: 50,
      });
      expect((await notes()).map((n) => n.kind).sort()).toEqual(["endpoint_disabled", "endpoint_failing"]);
      return notes();
    }

    test("20 consecutive failures warn once; 50 with no success in 24 hours disable (consecutive_failures); both kept as notifications without SMTP", async () => {
      app = await relayApp();
      const notes = await failUntilDisabled();
      expect(notes.every((n) => n.emailedAt === null)).toBe(true);
      expect(app.deps.logger.lines.some((l) => l.msg === "notification (no SMTP_URL: not emailed)")).toBe(true);
    });

    test("with SMTP_URL, the warning at 20 failures and the disabling at 50 are emailed", async () => {
      const smtp = smtpSink();
      stops.push(smtp.stop);
      app = await relayApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: "relay@example.com" } });
      const notes = await failUntilDisabled();
      expect(notes.every((n) => n.emailedAt !== null)).toBe(true);
      expect(smtp.messages.map((m) => m.data.match(/^Subject: (.*)$/m)?.[1]?.replace(/ http\S+$/, ""))).toEqual([
        "Webhook endpoint failing:",
        "Webhook endpoint disabled:",
      ]);
    });

    test("50 failures do not disable when a success happened within 24 hours", async () => {
      app = await relayApp();
      const { a, rx, ep, send } = await oneEndpoint(undefined, ["messages"], signature);
      await send();
      await app.tick();
      rx.respond(() => new Response("", { status: 500 }));
      app.deps.clock.advance(HOUR);
      for (let i = 0; i < 55; i++) await send();
      await app.tick();
      expect((await a.api("GET", `/api/endpoints/${ep.id}`)).body).toMatchObject({
        enabled: true,
        consecutive_failures: 55,
      });
    });
  },
);

describe.each(SIGNATURE_SCHEMES)(
  "concurrency (docs/webhooks.md#at-least-once-and-in-no-fixed-order) [signature %s]",
  (signature) => {
    test("at most 10 requests in flight to one endpoint; another endpoint is not held up", async () => {
      app = await relayApp();
      app.deps.clock.set(Date.now());
      const a = await app.account();
      const held: (() => void)[] = [];
      let open = 0;
      let most = 0;
      const slow = app.receiver(
        () =>
          new Promise<Response>((resolve) => {
            most = Math.max(most, ++open);
            held.push(() => {
              open--;
              resolve(new Response("ok"));
            });
          }),
      );
      const fast = app.receiver();
      await a.endpoint(slow.url, ["messages"], undefined, signature);
      await a.endpoint(fast.url, ["messages"], undefined, signature);
      for (let i = 0; i < 25; i++)
        await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
      while (slow.received.length < 10 || fast.received.length < 25) await Bun.sleep(5);
      // Ask the queue for more work: every claim must come back empty for the slow endpoint.
      app.relay.dispatcher.wake();
      app.relay.dispatcher.wake();
      await Bun.sleep(20);
      expect(slow.received).toHaveLength(10);
      // 10 in flight; a sole worker (SQLite) holds the other 15 in the endpoint's buffer, leased to
      // this process. On a shared queue (PostgreSQL) a lease is a request in flight, counted across
      // every instance: the other 15 wait in the store.
      const leased = (await app.deps.query(LEASED_COUNT))[0]!;
      expect(leased.n).toBe(app.deps.store.queue.soleWorker ? 25 : 10);
      const drained = app.tick();
      while (slow.received.length < 25 || held.length > 0) {
        for (const release of held.splice(0)) release();
        await Bun.sleep(1);
      }
      await drained;
      expect(slow.received).toHaveLength(25);
      expect(most).toBe(10);
    });
  },
);

describe("the endpoint's buffer", () => {
  test("fresh deliveries that find the endpoint's slots full wait in its line: no claim takes them, and they are signed with the endpoint as it is when they start", async () => {
    app = await relayApp();
    const held: (() => void)[] = [];
    const { a, rx, ep, send } = await oneEndpoint(
      () => new Promise<Response>((resolve) => held.push(() => resolve(new Response("ok")))),
    );
    const claims = spyOn(app.deps.store.queue, "claimDue");
    for (let i = 0; i < 12; i++) expect((await send(`m${i}`)).status).toBe(200);
    while (rx.received.length < 10) await Bun.sleep(5);
    const rotated = await a.api<{ secret: string }>("POST", `/api/endpoints/${ep.id}/rotate-secret`);
    while (rx.received.length < 12 || held.length > 0) {
      for (const release of held.splice(0)) release();
      await Bun.sleep(1);
    }
    const taken = await Promise.all(claims.mock.results.map((call) => call.value as Promise<unknown[]>));
    // A sole worker buffers them: the scheduler's own tick may have claimed meanwhile, but never found
    // anything to take. On a shared queue (PostgreSQL) nothing is buffered: claims take them as slots free.
    if (app.deps.store.queue.soleWorker) for (const claimed of taken) expect(claimed).toEqual([]);
    else expect(taken.flat().length).toBe(12);
    const verifies = (secret: string, got: (typeof rx.received)[number]) => {
      try {
        new Webhook(secret).verify(got.body, {
          "webhook-id": got.headers["webhook-id"]!,
          "webhook-timestamp": got.headers["webhook-timestamp"]!,
          "webhook-signature": got.headers["webhook-signature"]!,
        });
        return true;
      } catch {
        return false;
      }
    };
    expect(rx.received.slice(0, 10).map((got) => verifies(rotated.body.secret, got))).toEqual(Array(10).fill(false));
    expect(rx.received.slice(10).map((got) => [verifies(rotated.body.secret, got), verifies(ep.secret, got)])).toEqual([
      [true, true],
      [true, true],
    ]);
    await app.tick();
    const succeeded = await a.api<PageJson<DeliveryJson>>("GET", "/api/deliveries?status=succeeded&limit=20");
    expect(succeeded.body.data).toHaveLength(12);
  });

  test("a line holds only what can start before its lease runs out: with a 60 s time-out, deliveries past the 10 slots wait unleased in the store for a claim", async () => {
    app = await relayApp({ env: { WEBHOOK_TIMEOUT_MS: "60000" } });
    const held: (() => void)[] = [];
    const { rx, send } = await oneEndpoint(
      () => new Promise<Response>((resolve) => held.push(() => resolve(new Response("ok")))),
    );
    for (let i = 0; i < 12; i++) expect((await send(`m${i}`)).status).toBe(200);
    while (rx.received.length < 10) await Bun.sleep(5);
    const count = async (where: string) =>
      (await app.deps.query(`SELECT COUNT(*) AS n FROM deliveries WHERE ${where}`))[0]!.n;
    expect((await app.deps.query(LEASED_COUNT))[0]!.n).toBe(10);
    expect(await count("status = 'pending'")).toBe(12);
    const drained = app.tick();
    while (rx.received.length < 12 || held.length > 0) {
      for (const release of held.splice(0)) release();
      await Bun.sleep(1);
    }
    await drained;
    expect(await count("status = 'succeeded'")).toBe(12);
  });
});

describe("a backlog in the store", () => {
  test("is claimed into the endpoint's buffer a round at a time, not one delivery per released slot, and all of it is delivered", async () => {
    app = await relayApp();
    const held: (() => void)[] = [];
    const { a, rx, ep } = await oneEndpoint(
      () => new Promise<Response>((resolve) => held.push(() => resolve(new Response("ok")))),
    );
    // 150 due deliveries waiting in the store, as a run that stopped behind leaves them.
    const now = app.deps.clock.now();
    const body = new TextEncoder().encode(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    const events = Array.from({ length: 150 }, () => eventRow(newEventId(app.deps.random, now), a.id, now, body));
    await app.deps.store.queue.enqueue(
      events,
      events.map((e) => deliveryRow(newDeliveryId(app.deps.random, now), e, ep.id, now)),
    );
    const claims = spyOn(app.deps.store.queue, "claimDue");
    const drained = app.tick();
    while (rx.received.length < 10) await Bun.sleep(5);
    const count = async (where: string) =>
      (await app.deps.query(`SELECT COUNT(*) AS n FROM deliveries WHERE ${where}`))[0]!.n;
    // A sole worker's one claim took what the buffer holds: 10 in flight and 50 waiting, all leased.
    // A shared queue leases only the 10 in flight.
    const sole = app.deps.store.queue.soleWorker;
    expect((await app.deps.query(LEASED_COUNT))[0]!.n).toBe(sole ? 60 : 10);
    while (rx.received.length < 150 || held.length > 0) {
      held.shift()?.();
      await Bun.sleep(1);
    }
    await drained;
    expect(await count("status = 'succeeded'")).toBe(150);
    const taken = await Promise.all(claims.mock.results.map((call) => call.value as Promise<unknown[]>));
    // The first claim took 60; each later one took a round of 10 as the buffer ran down.
    if (sole) expect(taken.filter((claimed) => claimed.length > 0).length).toBeLessThanOrEqual(10);
    // On a shared queue no claim ever took more than the endpoint's 10.
    else expect(Math.max(...taken.map((claimed) => claimed.length))).toBeLessThanOrEqual(10);
  });
});

describe("rotation overlap (docs/webhooks.md#secret-rotation)", () => {
  test("for 24 hours after a rotation every delivery carries both signatures, then only the new one", async () => {
    app = await relayApp();
    const { a, rx, ep, send } = await oneEndpoint();
    const rotated = await a.api<{ secret: string }>("POST", `/api/endpoints/${ep.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(ep.secret);
    await send();
    await app.tick();
    const got = rx.received[0]!;
    const headers = {
      "webhook-id": got.headers["webhook-id"]!,
      "webhook-timestamp": got.headers["webhook-timestamp"]!,
      "webhook-signature": got.headers["webhook-signature"]!,
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    new Webhook(fresh).verify(got.body, headers);
    new Webhook(ep.secret).verify(got.body, headers);
    expect((await a.api<EndpointJson>("GET", `/api/endpoints/${ep.id}`)).body.previous_secret_expires_at).toBe(
      new Date(app.deps.clock.now() + 24 * HOUR).toISOString(),
    );

    app.deps.clock.advance(24 * HOUR - 1);
    await send();
    await app.tick();
    expect(rx.received[1]!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    app.deps.clock.advance(1);
    await send();
    await app.tick();
    const last = rx.received[2]!;
    const signatures = last.headers["webhook-signature"]!.split(" ");
    // The library checks timestamps against the real clock, which this test has moved past; sign with it instead.
    const expected = new Webhook(fresh).sign(
      last.headers["webhook-id"]!,
      new Date(Number(last.headers["webhook-timestamp"]) * 1000),
      last.body,
    );
    expect(signatures).toEqual([expected]);
  });
});

describe.each(SIGNATURE_SCHEMES)("replay (docs/webhooks.md#replay) [signature %s]", (signature) => {
  test("replay makes a new delivery with a new webhook-id and replay_of, carrying the same bytes", async () => {
    app = await relayApp();
    const { a, rx, send } = await oneEndpoint(() => new Response("", { status: 500 }), ["messages"], signature);
    await send();
    await app.tick();
    const original = rx.received[0]!;
    rx.respond(() => new Response("ok"));
    const replay = await a.api<DeliveryJson>("POST", `/api/deliveries/${original.headers["webhook-id"]}/replay`);
    expect(replay.status).toBe(201);
    expect(replay.body).toMatchObject({ replay_of: original.headers["webhook-id"], status: "pending" });
    expect(replay.body.id).not.toBe(original.headers["webhook-id"]);
    await app.tick();
    expect(rx.received[1]!.headers["webhook-id"]).toBe(replay.body.id);
    expect(rx.received[1]!.body).toBe(original.body);
  });
});

describe("history payloads and retention (docs/webhooks.md#replay, docs/webhooks.md#retention)", () => {
  test("a history payload is deleted once its delivery succeeds or parks: replay answers 410 payload_expired", async () => {
    app = await relayApp();
    const { a, rx, ep, send } = await oneEndpoint(undefined, ["history", "messages"]);
    await send("sync", "history");
    await app.tick();
    const succeeded = rx.received[0]!.headers["webhook-id"]!;
    const detail = await a.api("GET", `/api/deliveries/${succeeded}`);
    expect(detail.body).toMatchObject({ status: "succeeded", payload_available: false, payload: null });
    const expired = await a.api<ErrorEnvelope>("POST", `/api/deliveries/${succeeded}/replay`);
    expect(expired.status).toBe(410);
    expect(expired.body.error).toMatchObject({
      type: "GoneException",
      code: "payload_expired",
      message: "The payload of this delivery has been deleted.",
    });
    expect(expired.headers.get("x-proxy-request-id")).toBe(expired.body.error.trace_id);

    rx.respond(() => new Response("", { status: 410 }));
    await send("sync 2", "history");
    await app.tick();
    const parked = rx.received[1]!.headers["webhook-id"]!;
    expect((await a.api("GET", `/api/deliveries/${parked}`)).body).toMatchObject({
      status: "parked",
      payload_available: false,
    });
    expect((await a.api("POST", `/api/deliveries/${parked}/replay`)).status).toBe(410);
    const bodies = (await app.deps.query("SELECT COUNT(*) AS n FROM events WHERE body IS NOT NULL"))[0]!;
    expect(bodies.n).toBe(0);

    // Other fields keep their payload for replay.
    rx.respond(() => new Response("ok"));
    await a.api("POST", `/api/endpoints/${ep.id}/enable`);
    await send("plain", "messages");
    await app.tick();
    const plain = rx.received[2]!.headers["webhook-id"]!;
    expect((await a.api<DeliveryDetailJson>("GET", `/api/deliveries/${plain}`)).body.payload).toBe(
      rx.received[2]!.body,
    );
  });

  test("deliveries, attempts and payloads are purged after the account's retention (24h, or 7d once set)", async () => {
    app = await relayApp();
    const { a, send } = await oneEndpoint();
    await send();
    await app.tick();
    const count = async () =>
      (
        await app.deps.query(
          "SELECT (SELECT COUNT(*) FROM deliveries) AS d, (SELECT COUNT(*) FROM attempts) AS a, (SELECT COUNT(*) FROM events) AS e",
        )
      )[0];
    expect(await count()).toEqual({ d: 1, a: 1, e: 1 });
    app.deps.clock.advance(24 * HOUR - MINUTE);
    await app.purge();
    expect(await count()).toEqual({ d: 1, a: 1, e: 1 });
    app.deps.clock.advance(2 * MINUTE);
    await app.purge();
    expect(await count()).toEqual({ d: 0, a: 0, e: 0 });

    expect((await a.api("PATCH", "/api/settings", { retention: "7d" })).body).toEqual({ retention: "7d" });
    expect((await a.api("GET", "/api/settings")).body).toEqual({ retention: "7d" });
    await send();
    await app.tick();
    app.deps.clock.advance(6 * 24 * HOUR);
    await app.purge();
    expect(await count()).toEqual({ d: 1, a: 1, e: 1 });
    app.deps.clock.advance(24 * HOUR + MINUTE);
    await app.purge();
    expect(await count()).toEqual({ d: 0, a: 0, e: 0 });
  });
});

describe("Send test (docs/webhooks.md#test-events)", () => {
  test("queues a proxy_test messages event through the normal pipeline, retries included", async () => {
    app = await relayApp();
    const { a, rx, ep } = await oneEndpoint(() => new Response("", { status: 500 }));
    const queued = await a.api<{ delivery_id: string }>("POST", `/api/endpoints/${ep.id}/test`);
    expect(queued.status).toBe(202);
    await app.tick();
    const got = rx.received[0]!;
    expect(got.headers["webhook-id"]).toBe(queued.body.delivery_id);
    const body = JSON.parse(got.body);
    expect(body.proxy_test).toBe(true);
    expect(body.entry[0].changes[0].field).toBe("messages");
    expect(body.entry[0].changes[0].value.metadata.phone_number_id).toBe(a.numbers[0]);
    expect(body.entry[0].changes[0].value.messages[0].id).toStartWith("wamid.proxy_test.");
    expect(body.entry[0].changes[0].value.messages[0].type).toBe("text");
    expect(body.entry[0].changes[0].value.messages[0].text.body).toBe(TEST_MESSAGE_TEXT);
    const detail = await a.api("GET", `/api/deliveries/${queued.body.delivery_id}`);
    expect(detail.body).toMatchObject({
      status: "pending",
      is_test: true,
      next_attempt_at: new Date(app.deps.clock.now() + 5 * SECOND).toISOString(),
    });
    rx.respond(() => new Response("ok"));
    app.deps.clock.advance(5 * SECOND);
    await app.tick();
    expect((await a.api<DeliveryJson>("GET", `/api/deliveries/${queued.body.delivery_id}`)).body.status).toBe(
      "succeeded",
    );
  });

  test("sends one change of the field chosen, any of the vocabulary, whatever the endpoint's fields", async () => {
    app = await relayApp();
    const { a, rx, ep } = await oneEndpoint();
    for (const field of EVENT_FIELDS) {
      const queued = await a.api<{ delivery_id: string }>("POST", `/api/endpoints/${ep.id}/test`, { field });
      expect({ field, status: queued.status }).toEqual({ field, status: 202 });
    }
    await app.tick();
    const bodies = rx.received.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.entry[0].changes[0].field).toSorted()).toEqual([...EVENT_FIELDS].toSorted());
    for (const body of bodies) {
      expect(body).toMatchObject({ proxy_test: true, entry: [{ id: a.wabaId }] });
      expect(body.entry).toHaveLength(1);
      expect(body.entry[0].changes).toHaveLength(1);
      expect(typeof body.entry[0].changes[0].value).toBe("object");
    }
    const template = bodies.find((b) => b.entry[0].changes[0].field === "message_template_status_update");
    expect(template.entry[0].changes[0].value).toMatchObject({
      event: "APPROVED",
      message_template_name: "proxy_test",
    });
    const echo = bodies.find((b) => b.entry[0].changes[0].field === "smb_message_echoes");
    expect(echo.entry[0].changes[0].value.metadata.phone_number_id).toBe(a.numbers[0]);
    expect(echo.entry[0].changes[0].value.message_echoes[0].id).toStartWith("wamid.proxy_test.");
    const list = await a.api<PageJson<DeliveryJson>>("GET", `/api/deliveries?endpoint_id=${ep.id}&limit=50`);
    expect(list.body.data.map((d) => d.fields[0]).toSorted()).toEqual([...EVENT_FIELDS].toSorted());
    for (const d of list.body.data) expect(d).toMatchObject({ is_test: true, status: "succeeded" });
  });

  test("an unknown field is 422 in the error envelope; another account's endpoint is 404; nothing is queued", async () => {
    app = await relayApp();
    const { a, rx, ep } = await oneEndpoint();
    const other = await app.account();
    const cases: [string, unknown, number, string][] = [
      [ep.id, { field: "nope" }, 422, "invalid_fields"],
      [ep.id, { field: "" }, 422, "invalid_fields"],
      [ep.id, { field: 7 }, 400, "invalid_request"],
      [ep.id, { field: "messages", extra: 1 }, 400, "invalid_request"],
      [ep.id, { field: "x".repeat(65) }, 400, "invalid_request"],
    ];
    for (const [id, body, status, code] of cases) {
      const r = await a.api<ErrorEnvelope>("POST", `/api/endpoints/${id}/test`, body);
      expect({ body, status: r.status, code: r.body.error?.code }).toEqual({ body, status, code });
    }
    for (const body of [undefined, { field: "account_update" }]) {
      const r = await other.api<ErrorEnvelope>("POST", `/api/endpoints/${ep.id}/test`, body);
      expect(r.status).toBe(404);
      expect(r.body.error.type).toBeString();
    }
    await app.tick();
    expect(rx.received).toHaveLength(0);
    const list = await a.api<PageJson<DeliveryJson>>("GET", `/api/deliveries?endpoint_id=${ep.id}`);
    expect(list.body.data).toHaveLength(0);
  });
});
