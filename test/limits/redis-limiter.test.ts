import { afterEach, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { rateLimitStep } from "../../src/limits/fail-open.ts";
import { MemoryLimiter } from "../../src/limits/limiter.ts";
import { LIMITS, numberBucket, wabaBucket } from "../../src/limits/policy.ts";
import { COOL_OFF_MS, RedisLimiter } from "../../src/limits/redis/limiter.ts";
import type { BucketSpec, Decision } from "../../src/limits/token-bucket.ts";
import { memoryLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { ManualClock } from "../../src/runtime/clock.ts";
import { freePort } from "../support/process.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { bearer, startWorld } from "../support/world.ts";

// The scale-out mode's buckets (docs/proxy.md#rate-limits, docs/operations.md#scale-out) against the real Redis on
// 127.0.0.1:6379. Redis decides by its own clock, which a test cannot move: a bucket is frozen by storing its
// state with a time ahead of Redis's (a bucket's time never goes back, so nothing refills until
// then), or aged by storing a time behind it.

const REDIS = "redis://127.0.0.1:6379";
const raw = new RedisClient(REDIS);
const cleanups: (() => unknown)[] = [];
let serial = 0;
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A key prefix of this test's own, and limiters on it; its keys are deleted after the test. */
function prefixed(clock = new ManualClock()) {
  const keyPrefix = `switchboard-test-${process.pid}-${++serial}:`;
  const limiters: RedisLimiter[] = [];
  cleanups.push(async () => {
    for (const limiter of limiters) limiter.close();
    const keys = (await raw.send("KEYS", [`${keyPrefix}*`])) as string[];
    if (keys.length > 0) await raw.send("DEL", keys);
  });
  const limiter = (url = REDIS) => {
    const made = new RedisLimiter({ url, keyPrefix, clock });
    limiters.push(made);
    return made;
  };
  return { keyPrefix, clock, limiter };
}

/** Redis's clock, in ms. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = (await raw.send("TIME", [])) as [string, string];
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

/** Stores a bucket's state: `tokens` as of `aheadMs` from Redis's now (positive: frozen until then). */
async function store(keyPrefix: string, spec: BucketSpec, tokens: number, aheadMs: number): Promise<number> {
  const at = (await redisNow()) + aheadMs;
  await raw.send("HSET", [`${keyPrefix}bucket:${spec.key}`, "tokens", String(tokens), "at", String(at)]);
  return at;
}

const standard = numberBucket({ phoneNumberId: "1", kind: "embedded", throughputLevel: "STANDARD" });
const high = numberBucket({ phoneNumberId: "2", kind: "embedded", throughputLevel: "HIGH" });
const coexistence = numberBucket({ phoneNumberId: "3", kind: "coexistence", throughputLevel: "HIGH" });
const waba = wabaBucket("4");

/** What the in-memory limiter decides for the same stored state at the same instant. */
function memoryDecisions(spec: BucketSpec, tokens: number, n: number): Decision[] {
  const clock = new ManualClock();
  const memory = new MemoryLimiter(clock);
  memory.restore([{ key: spec.key, tokens, updatedAt: clock.now() }]);
  return Array.from({ length: n }, () => memory.take(spec));
}

describe("Redis token buckets: docs/proxy.md#rate-limits exactly, as the in-memory limiter decides", () => {
  test.each([
    ["standard", standard],
    ["HIGH", high],
    ["coexistence", coexistence],
    ["WABA", waba],
  ] as const)(
    "a full %s bucket passes exactly its capacity, then refuses with the same headers as in memory",
    async (_, spec) => {
      const { keyPrefix, limiter } = prefixed();
      const redis = limiter();
      await store(keyPrefix, spec, spec.capacity, 60_000);
      // Concurrent, as callers are: one Lua script per decision, so none is lost or doubled.
      const decisions = await Promise.all(Array.from({ length: spec.capacity + 1 }, () => redis.take(spec)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(spec.capacity);
      const byRemaining = [...decisions].sort(
        (a, b) => b.remaining - a.remaining || Number(b.allowed) - Number(a.allowed),
      );
      expect(byRemaining).toEqual(
        memoryDecisions(spec, spec.capacity, spec.capacity + 1).sort(
          (a, b) => b.remaining - a.remaining || Number(b.allowed) - Number(a.allowed),
        ),
      );
    },
  );

  test("partly drained buckets: remaining, reset and retry-after as in memory (a WABA's reset reaches 3600)", async () => {
    const { keyPrefix, limiter } = prefixed();
    const redis = limiter();
    for (const [spec, tokens] of [
      [standard, 0.3],
      [standard, 40.5],
      [standard, 79.99],
      [coexistence, 1.2],
      [waba, 0.3],
      [waba, 2500.7],
    ] as const) {
      await store(keyPrefix, spec, tokens, 60_000);
      const got = [await redis.take(spec), await redis.take(spec)];
      expect(got).toEqual(memoryDecisions(spec, tokens, 2));
    }
    await store(keyPrefix, waba, 0, 60_000);
    expect(await redis.take(waba)).toEqual({
      allowed: false,
      limit: 5000,
      remaining: 0,
      resetSeconds: 3600,
      retryAfterSeconds: 1,
    });
  });

  test("buckets refill continuously by Redis's clock; an unknown bucket is full; a refusal spends nothing", async () => {
    const { keyPrefix, limiter } = prefixed();
    const redis = limiter();
    expect(await redis.take(standard)).toMatchObject({ allowed: true, remaining: 79 });
    // Empty half a second ago: 40 tokens since (and a few more for the milliseconds this takes).
    await store(keyPrefix, standard, 0, -500);
    const refilled = await redis.take(standard);
    expect(refilled.allowed).toBe(true);
    expect(refilled.remaining).toBeGreaterThanOrEqual(39);
    expect(refilled.remaining).toBeLessThan(45);
    // Empty an hour ago: full again, whatever it held.
    await store(keyPrefix, waba, 0, -3_600_000);
    expect(await redis.take(waba)).toMatchObject({ allowed: true, remaining: 4999, resetSeconds: 1 });
    await store(keyPrefix, standard, 0.5, 60_000);
    expect((await redis.take(standard)).allowed).toBe(false);
    expect(await raw.send("HGET", [`${keyPrefix}bucket:${standard.key}`, "tokens"])).toBe("0.5");
  });

  test("two limiters on one prefix (two instances) share each bucket: a burst spread over both passes the capacity once", async () => {
    const { keyPrefix, limiter } = prefixed();
    const [a, b] = [limiter(), limiter()];
    await store(keyPrefix, standard, LIMITS.numberStandard.capacity, 60_000);
    const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).take(standard)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(80);
    expect(new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(80);
  });

  test("keys live under the prefix with an expiry of twice the refill time; a Redis that forgot the script is sent it again", async () => {
    const { keyPrefix, limiter } = prefixed();
    const redis = limiter();
    await redis.take(standard);
    await redis.take(waba);
    const ttl = async (spec: BucketSpec) => Number(await raw.send("PTTL", [`${keyPrefix}bucket:${spec.key}`]));
    expect(await ttl(standard)).toBeGreaterThan(0);
    expect(await ttl(standard)).toBeLessThanOrEqual(2 * standard.windowMs);
    expect(await ttl(waba)).toBeGreaterThan(3_600_000);
    expect(await ttl(waba)).toBeLessThanOrEqual(2 * waba.windowMs);
    await raw.send("SCRIPT", ["FLUSH"]);
    expect(await redis.take(standard)).toMatchObject({ allowed: true, remaining: 78 });
  });
});

describe("Redis token buckets over HTTP, through the proxy", () => {
  /** A world whose proxy decides in Redis under this test's prefix. */
  async function redisWorld() {
    const { keyPrefix, limiter, clock } = prefixed();
    const redis = limiter();
    const world = await startWorld({
      deps: { clock, limits: { limiter: redis, worker: { start() {}, stop: async () => {} } } },
    });
    cleanups.push(() => world.stop());
    return { world, keyPrefix, biz: await world.business() };
  }
  const headers = (r: Response) => [
    r.status,
    r.headers.get("ratelimit-limit"),
    r.headers.get("ratelimit-remaining"),
    r.headers.get("ratelimit-reset"),
    r.headers.get("retry-after"),
  ];

  test("sends spend the number's bucket: 80, then 429 with Retry-After 1; reads spend the WABA's 5,000 an hour, and a drained one says Reset 3600", async () => {
    const { world, keyPrefix, biz } = await redisWorld();
    const send = () =>
      world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
        method: "POST",
        headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "hi" } }),
      });
    const number = numberBucket({ phoneNumberId: biz.phoneNumberId, kind: "embedded", throughputLevel: "STANDARD" });
    await store(keyPrefix, number, 80, 60_000);
    const answers: Response[] = [];
    for (let i = 0; i < 80; i++) answers.push(await send());
    expect(headers(answers[0]!)).toEqual([200, "80", "79", "1", null]);
    expect(headers(answers[79]!)).toEqual([200, "80", "0", "1", null]);
    const refused = await send();
    expect(headers(refused)).toEqual([429, "80", "0", "1", "1"]);
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(1006);
    const read = (path: string) => world.call(path, { headers: bearer(biz.liveKey) });
    expect(headers(await read(`/v21.0/${biz.wabaId}/message_templates`))).toEqual([200, "5000", "4999", "1", null]);
    expect(headers(await read(`/v21.0/${biz.phoneNumberId}`)).slice(0, 3)).toEqual([200, "5000", "4998"]);
    await store(keyPrefix, wabaBucket(biz.wabaId), 0, 60_000);
    expect(headers(await read(`/v21.0/${biz.wabaId}/message_templates`))).toEqual([429, "5000", "0", "3600", "1"]);
  });
});

/** A relay to the test Redis that the test can cut or stall (see tcp-proxy.ts). */
function redisRelay() {
  const relay = startTcpProxy({ host: "127.0.0.1", port: 6379 });
  cleanups.push(() => relay.stop());
  return Object.assign(relay, { url: `redis://127.0.0.1:${relay.port}` });
}

describe("Redis away: fail open within 50 ms, counted, and back by itself", () => {
  const open = { allowed: true, limit: 80, remaining: 80, resetSeconds: 0, retryAfterSeconds: null };
  const stepOn = (limiter: RedisLimiter, clock: ManualClock) => {
    const metrics = createMetrics();
    const logger = memoryLogger();
    const failedOpen = async (reason: string) =>
      (await metrics.rateLimitFailOpen.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
    return { decide: rateLimitStep(limiter, { logger, clock, metrics }), failedOpen, logger };
  };

  test("a Redis that went away fails open at once, is left alone for a second, and is used again once it is back", async () => {
    const relay = redisRelay();
    const { limiter, clock } = prefixed();
    const redis = limiter(relay.url);
    const { decide, failedOpen } = stepOn(redis, clock);
    expect(await decide(standard)).toMatchObject({ allowed: true, remaining: 79 });
    relay.cut();
    await Bun.sleep(20); // the client notices its connection closed
    let started = performance.now();
    expect(await decide(standard)).toEqual(open);
    expect(performance.now() - started).toBeLessThan(50);
    expect(await failedOpen("error")).toBe(1);
    // Within the cool-off, nothing is sent: an immediate answer, counted as unavailable.
    started = performance.now();
    expect(await decide(standard)).toEqual(open);
    expect(performance.now() - started).toBeLessThan(10);
    expect(await failedOpen("unavailable")).toBe(1);
    relay.restore();
    clock.advance(COOL_OFF_MS);
    // The client reconnects by itself; decisions are real again (the bucket kept its state in Redis).
    const deadline = performance.now() + 5_000;
    let decision = await decide(standard);
    while (decision.remaining === 80 && performance.now() < deadline) {
      await Bun.sleep(50);
      clock.advance(COOL_OFF_MS);
      decision = await decide(standard);
    }
    expect(decision).toMatchObject({ allowed: true, limit: 80 });
    expect(decision.remaining).toBeLessThan(80);
  });

  test("a Redis that stops answering fails open after 50 ms, then at once while its connection is replaced, with nothing piling up", async () => {
    const relay = redisRelay();
    const { limiter, clock } = prefixed();
    const redis = limiter(relay.url);
    const { decide, failedOpen } = stepOn(redis, clock);
    expect(await decide(standard)).toMatchObject({ allowed: true });
    relay.stall();
    await Bun.sleep(20);
    const started = performance.now();
    const first = await Promise.all(Array.from({ length: 20 }, () => decide(standard)));
    const took = performance.now() - started;
    expect(first.every((d) => d.remaining === 80)).toBe(true);
    expect(took).toBeGreaterThanOrEqual(45);
    expect(took).toBeLessThan(500);
    expect((await failedOpen("slow")) + (await failedOpen("error"))).toBe(20);
    // The late commands are noticed: the connection is dropped and nothing more is sent for a while.
    const quick = performance.now();
    expect(await decide(standard)).toEqual(open);
    expect(performance.now() - quick).toBeLessThan(10);
    expect(await failedOpen("unavailable")).toBeGreaterThanOrEqual(1);
  });

  test("over HTTP: with nothing listening at REDIS_URL, proxied calls pass with the normal limit, full remaining and reset 0, counted in /metrics", async () => {
    const clock = new ManualClock();
    const nothing = new RedisLimiter({ url: `redis://127.0.0.1:${freePort()}`, keyPrefix: "unused:", clock });
    cleanups.push(() => nothing.close());
    const world = await startWorld({
      deps: { clock, limits: { limiter: nothing, worker: { start() {}, stop: async () => nothing.close() } } },
    });
    cleanups.push(() => world.stop());
    const biz = await world.business();
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const r = await world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
        method: "POST",
        headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "hi" } }),
      });
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(r.status).toBe(200);
      expect([
        r.headers.get("ratelimit-limit"),
        r.headers.get("ratelimit-remaining"),
        r.headers.get("ratelimit-reset"),
      ]).toEqual(["80", "80", "0"]);
      expect(r.headers.get("retry-after")).toBeNull();
    }
    const metrics = await (await world.call("/metrics")).text();
    const failedOpen = [...metrics.matchAll(/^switchboard_rate_limit_fail_open_total\{reason="\w+"\} (\d+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    expect(failedOpen).toBe(3);
    expect(world.deps.logger.lines.filter((l) => l.msg === "rate limiter failed open")).toHaveLength(1);
  });
});
