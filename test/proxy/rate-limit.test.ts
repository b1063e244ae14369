import { afterEach, describe, expect, test } from "bun:test";
import { MemoryLimiter, type RateLimiter } from "../../src/limits/limiter.ts";
import { createProxy } from "../../src/proxy/pipeline.ts";
import { onSqlite } from "../support/backend.ts";
import { bearer, startWorld, type Business, type World } from "../support/world.ts";

let world: World;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await world.stop();
});

const send = (biz: Business, phoneNumberId = biz.phoneNumberId, url?: string) =>
  fetch(`${url ?? world.url}/v21.0/${phoneNumberId}/messages`, {
    method: "POST",
    headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
  });
const limits = (r: Response) => ({
  status: r.status,
  limit: r.headers.get("ratelimit-limit"),
  remaining: r.headers.get("ratelimit-remaining"),
  reset: r.headers.get("ratelimit-reset"),
  retryAfter: r.headers.get("retry-after"),
});
const burst = async (biz: Business, n: number, phoneNumberId = biz.phoneNumberId) => {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) out.push(await send(biz, phoneNumberId));
  return out;
};

// These move the injected clock to refill buckets: the in-memory limiter's. On the PostgreSQL pass
// the buckets are Redis's, which decides by its own clock; test/limits/redis-limiter.test.ts holds
// the same rules for it, over HTTP too.
describe.skipIf(!onSqlite)("docs/proxy.md#rate-limits over HTTP", () => {
  test("number bucket: headers on every allowed call, 429 past 80, refill with the clock", async () => {
    world = await startWorld();
    const biz = await world.business();
    const answers = await burst(biz, 80);
    expect(limits(answers[0]!)).toEqual({ status: 200, limit: "80", remaining: "79", reset: "1", retryAfter: null });
    expect(limits(answers[79]!)).toEqual({ status: 200, limit: "80", remaining: "0", reset: "1", retryAfter: null });
    expect(limits(await send(biz))).toEqual({ status: 429, limit: "80", remaining: "0", reset: "1", retryAfter: "1" });
    world.deps.clock.advance(13);
    expect((await send(biz)).status).toBe(200);
    expect((await send(biz)).status).toBe(429);
    world.deps.clock.advance(1000);
    expect(limits(await send(biz))).toMatchObject({ status: 200, remaining: "79" });
  });

  test("each number has its own bucket; sends do not touch the WABA bucket", async () => {
    world = await startWorld();
    const biz = await world.business();
    const second = await world.number(biz.accountId, biz.wabaId);
    await burst(biz, 80);
    expect((await send(biz)).status).toBe(429);
    expect(limits(await send(biz, second))).toMatchObject({ status: 200, remaining: "79" });
    const templates = await world.call(`/v21.0/${biz.wabaId}/message_templates`, { headers: bearer(biz.liveKey) });
    expect(limits(templates)).toEqual({ status: 200, limit: "5000", remaining: "4999", reset: "1", retryAfter: null });
  });

  test("templates, number reads, profile and media reads share the WABA bucket; uploads use the number's", async () => {
    world = await startWorld();
    const biz = await world.business();
    const get = (path: string) => world.call(path, { headers: bearer(biz.liveKey) });
    expect(limits(await get(`/v21.0/${biz.wabaId}/message_templates`)).remaining).toBe("4999");
    expect(limits(await get(`/v21.0/${biz.phoneNumberId}`)).remaining).toBe("4998");
    expect(limits(await get(`/v21.0/${biz.phoneNumberId}/chat_business_profile`)).remaining).toBe("4997");
    const form = new FormData();
    form.set("file", new Blob(["x"], { type: "text/plain" }), "x.txt");
    const upload = await world.call(`/v21.0/${biz.phoneNumberId}/media`, {
      method: "POST",
      headers: bearer(biz.liveKey),
      body: form,
    });
    expect(limits(upload)).toMatchObject({ limit: "80", remaining: "79" });
    const { id } = (await upload.json()) as { id: string };
    expect(limits(await get(`/v21.0/${id}?phone_number_id=${biz.phoneNumberId}`))).toMatchObject({
      limit: "5000",
      remaining: "4996",
    });
  });

  test("HIGH numbers get 1000/s; coexistence numbers 20/s whatever their tier", async () => {
    world = await startWorld();
    const biz = await world.business({ throughput: "HIGH" });
    expect(limits(await send(biz))).toMatchObject({ limit: "1000", remaining: "999" });
    const coex = await world.number(biz.accountId, biz.wabaId, { kind: "coexistence", throughput: "HIGH" });
    const answers = await burst(biz, 21, coex);
    expect(limits(answers[0]!)).toMatchObject({ limit: "20", remaining: "19" });
    expect(limits(answers[20]!)).toMatchObject({ status: 429, retryAfter: "1" });
  });

  // Drained through the single-instance write-through.
  test("a drained WABA bucket answers 429 with Retry-After 1 and Reset 3600", async () => {
    world = await startWorld();
    const biz = await world.business();
    // 5,000 calls would be slow: the bucket is saved drained and the app restarted over it.
    await world.deps.store.buckets.saveMany([
      { key: `waba:${biz.wabaId}`, tokens: 0, updatedAt: world.deps.clock.now() },
    ]);
    await world.restart();
    const r = await world.call(`/v21.0/${biz.wabaId}/message_templates`, { headers: bearer(biz.liveKey) });
    expect(limits(r)).toEqual({ status: 429, limit: "5000", remaining: "0", reset: "3600", retryAfter: "1" });
    // The same message as a number's 429 (docs/errors.md#proxy-errors: "also when the WABA budget ran out").
    expect(await r.json()).toEqual({
      error: {
        message: "Rate limit reached for this number.",
        type: "ProxyThrottleException",
        code: 1006,
        trace_id: r.headers.get("x-proxy-request-id"),
      },
    });
    world.deps.clock.advance(720);
    expect(
      limits(await world.call(`/v21.0/${biz.wabaId}/message_templates`, { headers: bearer(biz.liveKey) })),
    ).toMatchObject({ status: 200, remaining: "0" });
  });
});

// The single-instance mode's write-through (see above); the scale-out mode's buckets live in Redis.
describe.skipIf(!onSqlite)("write-through and restore", () => {
  test("buckets are written in coalesced batches, never per request, and a restart keeps a drained number drained", async () => {
    world = await startWorld();
    const biz = await world.business();
    const buckets = world.deps.store.buckets;
    const saves: number[] = [];
    const save = buckets.saveMany.bind(buckets);
    buckets.saveMany = (states) => {
      saves.push(states.length);
      return save(states);
    };
    const began = performance.now();
    await burst(biz, 80);
    await world.restart(); // the old app's shutdown flushes
    // The flush runs on a real one-second timer: one save per second that saw a change, plus the
    // one at shutdown, however slow a busy machine makes the 80 calls; never one per call.
    const seconds = Math.ceil((performance.now() - began) / 1000);
    expect(saves.length).toBeGreaterThanOrEqual(1);
    expect(saves.length).toBeLessThanOrEqual(Math.min(seconds + 1, 79));
    expect(saves.every((n) => n === 1)).toBe(true);
    expect(limits(await send(biz))).toMatchObject({ status: 429, retryAfter: "1" });
    world.deps.clock.advance(1000);
    expect(limits(await send(biz))).toMatchObject({ status: 200, remaining: "79" });
  });

  test("an idle number is full again after a restart", async () => {
    world = await startWorld();
    const biz = await world.business();
    await burst(biz, 80);
    world.deps.clock.advance(60_000);
    await world.restart();
    expect(limits(await send(biz))).toMatchObject({ status: 200, remaining: "79" });
  });
});

// The scale-out mode's buckets answer later (Redis): the same headers and refusals through the
// promise path. The decisions are the in-memory limiter's under the world's clock, so none refills.
describe("a limiter that answers later, over HTTP", () => {
  test("RateLimit-* and the request id on every allowed call; 429 with Retry-After past the limit", async () => {
    world = await startWorld();
    const biz = await world.business();
    const memory = new MemoryLimiter(world.deps.clock);
    const later: RateLimiter = { take: (spec) => Promise.resolve(memory.take(spec)) };
    const handle = createProxy(world.deps, later);
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => handle(request) });
    cleanups.push(() => server.stop(true));
    const url = `http://127.0.0.1:${server.port}`;
    const first = await send(biz, biz.phoneNumberId, url);
    expect(limits(first)).toEqual({ status: 200, limit: "80", remaining: "79", reset: "1", retryAfter: null });
    expect(first.headers.get("x-proxy-request-id")).toMatch(/^req_/);
    for (let i = 1; i < 80; i++) expect((await send(biz, biz.phoneNumberId, url)).status).toBe(200);
    const refused = await send(biz, biz.phoneNumberId, url);
    expect(limits(refused)).toEqual({ status: 429, limit: "80", remaining: "0", reset: "1", retryAfter: "1" });
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(1006);
  });
});

describe("fail-open over HTTP", () => {
  test("a broken limiter lets calls through with the normal limit, full remaining, reset 0", async () => {
    world = await startWorld();
    const biz = await world.business();
    const broken: RateLimiter = {
      take: () => {
        throw new Error("limiter down");
      },
    };
    const handle = createProxy(world.deps, broken);
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => handle(request) });
    cleanups.push(() => server.stop(true));
    const r = await send(biz, biz.phoneNumberId, `http://127.0.0.1:${server.port}`);
    expect(limits(r)).toEqual({ status: 200, limit: "80", remaining: "80", reset: "0", retryAfter: null });
  });
});
