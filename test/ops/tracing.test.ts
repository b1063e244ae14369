import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { SpanDetail } from "../../src/config/config.ts";
import type { Tracing } from "../../src/observability/tracing.ts";
import { createTracing } from "../../src/observability/tracing-sdk.ts";
import { otlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { tempDir, TEST_APP_SECRET } from "../support/harness.ts";
import { bearer, startWorld, type Business, type World } from "../support/world.ts";
import { eventBody, messageChange, relayApp } from "../webhooks/support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

/** An OTLP/HTTP receiver on loopback and the tracing that exports to it, as OTEL_EXPORTER_OTLP_ENDPOINT would set it up. */
function collector(detail: SpanDetail = "call") {
  const receiver = otlpReceiver();
  const tracing: Tracing = createTracing({
    url: `${receiver.endpoint}/v1/traces`,
    serviceName: "switchboard-test",
    detail,
  });
  cleanups.push(receiver.stop);
  return { receiver, tracing };
}

async function tracedWorld(detail?: SpanDetail) {
  const { receiver, tracing } = collector(detail);
  const world: World = await startWorld({ deps: { tracing } });
  cleanups.push(() => world.stop());
  return { receiver, tracing, world };
}

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const traceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

const send = (world: World, biz: Business, headers: Record<string, string> = {}) =>
  world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(biz.liveKey), "content-type": "application/json", ...headers },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId);
const byName = (spans: ReceivedSpan[], name: string) => spans.find((s) => s.name === name)!;
const nanos = (value: string) => BigInt(value);

describe("OpenTelemetry traces of proxied calls (OTEL_SPAN_DETAIL=call, the default)", () => {
  test("a call is one server span under the caller's traceparent, with what the checks, the rate limit and upstream said; traceparent does not go upstream", async () => {
    const { receiver, tracing, world } = await tracedWorld();
    const biz = await world.business();
    const r = await send(world, biz, { traceparent });
    expect(r.status).toBe(200);
    await tracing.shutdown();

    expect(receiver.spans).toHaveLength(1);
    const [call] = receiver.spans;
    expect(call!).toMatchObject({
      kind: SERVER,
      name: "POST /{version}/{phone_number_id}/messages",
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
    });
    expect(call!.attributes).toMatchObject({
      "switchboard.request_id": r.headers.get("x-proxy-request-id")!,
      "http.request.method": "POST",
      "http.route": "/{version}/{phone_number_id}/messages",
      "url.path": `/v21.0/${biz.phoneNumberId}/messages`,
      "http.response.status_code": 200,
      "switchboard.ratelimit.bucket": `number:${biz.phoneNumberId}`,
      "switchboard.ratelimit.allowed": true,
      "switchboard.ratelimit.limit": 80,
      "switchboard.ratelimit.remaining": 79,
      "switchboard.upstream.status_code": 200,
    });
    const duration = Number(call!.attributes["switchboard.upstream.duration_ms"]);
    expect(duration).toBeGreaterThan(0);
    expect(duration).toBeLessThanOrEqual(Number(nanos(call!.endTimeUnixNano) - nanos(call!.startTimeUnixNano)) / 1e6);
    expect(call!.attributes["switchboard.check.failed"]).toBeUndefined();
    expect(JSON.stringify(receiver.spans)).not.toContain("appsecret_proof");
    expect(world.sim.requests.at(-1)!.headers.traceparent).toBeUndefined();
  });

  test("a refused call names the failed check; a call upstream dropped is an error with upstream's error, and nothing else is made", async () => {
    const { receiver, tracing, world } = await tracedWorld();
    const biz = await world.business();
    expect((await send(world, { ...biz, liveKey: "px_live_not-a-key-of-anyone-here-000000" })).status).toBe(401);
    world.sim.fault(biz.phoneNumberId, { drop: true }, 1);
    expect((await send(world, biz)).status).toBe(502);
    await tracing.shutdown();

    expect(receiver.spans).toHaveLength(2);
    const refused = receiver.spans.find((s) => s.attributes["http.response.status_code"] === 401)!;
    expect(refused.name).toBe("POST");
    expect(refused.attributes).toMatchObject({
      "switchboard.check.failed": "invalid_api_key",
      "switchboard.error.code": 1001,
    });
    expect(Object.keys(refused.attributes).filter((k) => /ratelimit|upstream/.test(k))).toEqual([]);
    const dropped = receiver.spans.find((s) => s.attributes["http.response.status_code"] === 502)!;
    expect(dropped.status.code).toBe(ERROR);
    expect(dropped.attributes).toMatchObject({
      "error.type": "502",
      "switchboard.error.code": 1007,
      "switchboard.upstream.error": "upstream_unreachable",
    });
    expect(dropped.attributes["switchboard.upstream.status_code"]).toBeUndefined();
  });
});

describe("OpenTelemetry traces of proxied calls (OTEL_SPAN_DETAIL=full)", () => {
  test("a call is a server span under the caller's traceparent; the checks, the rate limit and the upstream call are its children; traceparent does not go upstream", async () => {
    const { receiver, tracing, world } = await tracedWorld("full");
    const biz = await world.business();
    const r = await send(world, biz, { traceparent, tracestate: "vendor=1" });
    expect(r.status).toBe(200);
    await tracing.shutdown(); // exports what has ended

    expect(receiver.contentTypes[0]).toBe("application/json");
    const call = receiver.spans.find((s) => s.kind === SERVER)!;
    expect(call.name).toBe("POST /{version}/{phone_number_id}/messages");
    expect(call.traceId).toBe(CALLER_TRACE);
    expect(call.parentSpanId).toBe(CALLER_SPAN);
    expect(call.attributes).toMatchObject({
      "switchboard.request_id": r.headers.get("x-proxy-request-id")!,
      "http.request.method": "POST",
      "http.route": "/{version}/{phone_number_id}/messages",
      "url.path": `/v21.0/${biz.phoneNumberId}/messages`,
      "http.response.status_code": 200,
    });
    expect(call.resource["service.name"]).toBe("switchboard-test");

    const children = childrenOf(receiver.spans, call);
    expect(children.map((s) => s.name).sort()).toEqual(["POST", "proxy checks", "rate limit"]);
    expect(receiver.spans).toHaveLength(4);
    for (const child of children) {
      expect(child.traceId).toBe(CALLER_TRACE);
      expect(nanos(child.startTimeUnixNano)).toBeGreaterThanOrEqual(nanos(call.startTimeUnixNano));
      expect(nanos(child.endTimeUnixNano)).toBeLessThanOrEqual(nanos(call.endTimeUnixNano));
    }
    const checks = byName(children, "proxy checks");
    const limit = byName(children, "rate limit");
    const upstream = byName(children, "POST");
    // In the order of docs/proxy.md#order-of-checks.
    expect(nanos(checks.endTimeUnixNano)).toBeLessThanOrEqual(nanos(limit.startTimeUnixNano));
    expect(nanos(limit.endTimeUnixNano)).toBeLessThanOrEqual(nanos(upstream.startTimeUnixNano));
    expect(limit.attributes).toMatchObject({
      "switchboard.ratelimit.bucket": `number:${biz.phoneNumberId}`,
      "switchboard.ratelimit.allowed": true,
      "switchboard.ratelimit.limit": 80,
      "switchboard.ratelimit.remaining": 79,
    });
    expect(upstream.kind).toBe(CLIENT);
    expect(upstream.attributes).toMatchObject({
      "http.request.method": "POST",
      "url.full": `${world.sim.url}/v21.0/${biz.phoneNumberId}/messages`,
      "http.response.status_code": 200,
    });
    // The query (our appsecret_proof) is not in any span.
    expect(JSON.stringify(receiver.spans)).not.toContain("appsecret_proof");

    // docs/proxy.md#what-goes-upstream: only Content-Type and Accept go upstream, so the caller's trace context does
    // not.
    const sent = world.sim.requests.at(-1)!.headers;
    expect(sent.traceparent).toBeUndefined();
    expect(sent.tracestate).toBeUndefined();
  });

  test("a refused call is a trace of its own without a traceparent: the failed check is named, and nothing was limited or sent", async () => {
    const { receiver, tracing, world } = await tracedWorld("full");
    const biz = await world.business();
    const r = await send(world, { ...biz, liveKey: "px_live_not-a-key-of-anyone-here-000000" });
    expect(r.status).toBe(401);
    await tracing.shutdown();
    expect(receiver.spans).toHaveLength(2);
    const call = receiver.spans.find((s) => s.kind === SERVER)!;
    expect(call.parentSpanId).toBe("");
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(call.name).toBe("POST"); // no route known before the allow-list step
    expect(call.attributes).toMatchObject({
      "http.response.status_code": 401,
      "switchboard.error.code": 1001,
      "switchboard.error.name": "invalid_api_key",
    });
    const [checks] = childrenOf(receiver.spans, call);
    expect(checks!.name).toBe("proxy checks");
    expect(checks!.attributes["switchboard.check.failed"]).toBe("invalid_api_key");
  });

  test("an upstream that drops the connection: 502, and the upstream span and the call are errors", async () => {
    const { receiver, tracing, world } = await tracedWorld("full");
    const biz = await world.business();
    world.sim.fault(biz.phoneNumberId, { drop: true }, 1);
    const r = await send(world, biz, { traceparent });
    expect(r.status).toBe(502);
    await tracing.shutdown();
    const call = receiver.spans.find((s) => s.kind === SERVER)!;
    expect(call.status.code).toBe(ERROR);
    expect(call.attributes).toMatchObject({
      "http.response.status_code": 502,
      "error.type": "502",
      "switchboard.error.code": 1007,
    });
    const upstream = receiver.spans.find((s) => s.kind === CLIENT)!;
    expect(upstream.parentSpanId).toBe(call.spanId);
    expect(upstream.status.code).toBe(ERROR);
    expect(upstream.attributes["error.type"]).toBe("upstream_unreachable");
    expect(upstream.attributes["http.response.status_code"]).toBeUndefined();
  });
});

describe("sampling (OTEL_TRACES_SAMPLER)", () => {
  test("parentbased_traceidratio at 0 keeps no trace of its own, but keeps a call its caller sampled", async () => {
    const receiver = otlpReceiver();
    const tracing = createTracing({
      url: `${receiver.endpoint}/v1/traces`,
      serviceName: "switchboard-test",
      sampler: "parentbased_traceidratio",
      ratio: 0,
    });
    const world = await startWorld({ deps: { tracing } });
    cleanups.push(receiver.stop, () => world.stop());
    const biz = await world.business();
    expect((await send(world, biz)).status).toBe(200);
    expect((await send(world, biz, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` })).status).toBe(200); // caller: not sampled
    expect((await send(world, biz, { traceparent })).status).toBe(200);
    await tracing.shutdown();
    expect(receiver.spans).toHaveLength(1);
    expect(receiver.spans[0]!.traceId).toBe(CALLER_TRACE);
  });
});

/** The relay exporting its spans to a receiver, with one account (its manual clock at the real time, as the relay's own tests set it). */
async function tracedRelay() {
  const { receiver, tracing } = collector();
  const app = await relayApp({ deps: { tracing } });
  cleanups.push(() => app.close());
  app.deps.clock.set(Date.now());
  return { receiver, tracing, app, a: await app.account() };
}

describe("OpenTelemetry traces of the webhook relay", () => {
  // An instance sends the deliveries of the events it accepts straight away only when the queue is
  // its own (SQLite); on a shared queue (PostgreSQL) any instance may claim them, and their
  // attempts start traces of their own.
  test("an accepted event is a server span under the caller's traceparent, and the first attempt of each of its deliveries a client span under it when this instance sends it straight away", async () => {
    const { receiver, tracing, app, a } = await tracedRelay();
    const rx = app.receiver();
    const endpoint = await a.endpoint(rx.url);
    const body = new TextEncoder().encode(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]));
    const posted = await fetch(`${app.url}/webhooks/upstream`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": hubSignature(TEST_APP_SECRET, body),
        traceparent,
      },
      body,
    });
    expect(posted.status).toBe(200);
    await app.tick();
    expect(rx.received).toHaveLength(1);
    // Receivers are not sent our trace context either: docs/webhooks.md#the-request-and-its-signature lists the
    // delivery's headers.
    expect(rx.received[0]!.headers.traceparent).toBeUndefined();
    await tracing.shutdown();

    const ingress = receiver.spans.find((s) => s.name === "POST /webhooks/upstream")!;
    expect(ingress.kind).toBe(SERVER);
    expect(ingress.traceId).toBe(CALLER_TRACE);
    expect(ingress.parentSpanId).toBe(CALLER_SPAN);
    expect(ingress.attributes).toMatchObject({
      "http.response.status_code": 200,
      "switchboard.request_id": posted.headers.get("x-proxy-request-id")!,
      "switchboard.webhook.events": 1,
      "switchboard.webhook.deliveries": 1,
    });
    const attempt = receiver.spans.find((s) => s.name === "webhook delivery")!;
    expect(attempt.kind).toBe(CLIENT);
    if (app.deps.store.queue.soleWorker) {
      expect(attempt.traceId).toBe(CALLER_TRACE);
      expect(attempt.parentSpanId).toBe(ingress.spanId);
    } else {
      expect(attempt.traceId).not.toBe(CALLER_TRACE);
      expect(attempt.parentSpanId).toBe("");
    }
    expect(attempt.attributes).toMatchObject({
      "switchboard.delivery_id": rx.received[0]!.headers["webhook-id"]!,
      "switchboard.endpoint_id": endpoint.id,
      "switchboard.attempt": 1,
      "http.response.status_code": 200,
      "switchboard.delivery.outcome": "succeeded",
      "switchboard.delivery.next": "succeeded",
      "server.address": "127.0.0.1",
    });
    // The receiver's URL may hold a token in its path: only its host is kept.
    expect(JSON.stringify(receiver.spans)).not.toContain("/hook");
  });

  test("a retry is a trace of its own, an error while it fails; a refused event's span has its status", async () => {
    const { receiver, tracing, app, a } = await tracedRelay();
    const rx = app.receiver(() => new Response("down", { status: 503 }));
    await a.endpoint(rx.url);
    expect((await app.post(eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!)] }]))).status).toBe(200);
    await app.tick();
    app.deps.clock.advance(5_000);
    await app.tick();
    expect(rx.received).toHaveLength(2);
    expect((await app.post("{}", null)).status).toBe(401);
    await tracing.shutdown();

    const attempts = receiver.spans
      .filter((s) => s.name === "webhook delivery")
      .sort((x, y) => Number(x.attributes["switchboard.attempt"]) - Number(y.attributes["switchboard.attempt"]));
    expect(attempts.map((s) => s.attributes["switchboard.attempt"])).toEqual([1, 2]);
    const ingress = receiver.spans.filter((s) => s.name === "POST /webhooks/upstream");
    const accepted = ingress.find((s) => s.attributes["http.response.status_code"] === 200)!;
    expect(attempts[0]!.parentSpanId).toBe(app.deps.store.queue.soleWorker ? accepted.spanId : "");
    expect(attempts[1]!.parentSpanId).toBe("");
    for (const attempt of attempts) {
      expect(attempt.status.code).toBe(ERROR);
      expect(attempt.attributes).toMatchObject({
        "http.response.status_code": 503,
        "switchboard.delivery.outcome": "rejected",
        "switchboard.delivery.next": "pending",
      });
    }
    expect(ingress.find((s) => s.attributes["http.response.status_code"] === 401)).toBeDefined();
  });
});

describe("OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  test("the server exports to it, and sends what it has when it stops", async () => {
    const receiver = otlpReceiver();
    cleanups.push(receiver.stop);
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const port = freePort();
    const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
      cwd: ROOT,
      env: processEnv(join(dir.path, "db.sqlite"), {
        PORT: String(port),
        HOST: "127.0.0.1",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: "switchboard-prod",
      }),
      stdout: "pipe",
      stderr: "pipe",
    });
    await waitForOk(`http://127.0.0.1:${port}/healthz`);
    const r = await fetch(`http://127.0.0.1:${port}/v21.0/123/messages`, { method: "POST", headers: { traceparent } });
    expect(r.status).toBe(401);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const call = receiver.spans.find((s) => s.kind === SERVER)!;
    expect(call.traceId).toBe(CALLER_TRACE);
    expect(call.resource["service.name"]).toBe("switchboard-prod");
  });
});
