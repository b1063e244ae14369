import { describe, expect, test } from "bun:test";
import { FAIL_OPEN_AFTER_MS, FAIL_OPEN_LOG_EVERY_MS, rateLimitStep } from "../../src/limits/fail-open.ts";
import { LimiterUnavailableError, MemoryLimiter, type RateLimiter } from "../../src/limits/limiter.ts";
import { LIMITS, numberBucket, wabaBucket } from "../../src/limits/policy.ts";
import { level, take, type BucketSpec, type Decision } from "../../src/limits/token-bucket.ts";
import { flushBuckets } from "../../src/limits/write-through.ts";
import { memoryLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { ManualClock } from "../../src/runtime/clock.ts";
import type { BucketStore } from "../../src/store/store.ts";
import type { BucketState } from "../../src/store/types.ts";

const number = (
  over: Partial<{ kind: "sandbox" | "byo" | "embedded" | "coexistence"; throughputLevel: "STANDARD" | "HIGH" }> = {},
) => numberBucket({ phoneNumberId: "1", kind: "embedded", throughputLevel: "STANDARD", ...over });

/** Takes `n` tokens at one instant; returns the last decision. */
function burst(limiter: MemoryLimiter, spec: BucketSpec, n: number): Decision {
  let last: Decision | undefined;
  for (let i = 0; i < n; i++) last = limiter.take(spec);
  return last!;
}

describe("docs/proxy.md#rate-limits bucket table", () => {
  test("capacities: standard 80/s, HIGH 1000/s, coexistence 20/s whatever its tier, WABA 5000/h", () => {
    expect(number()).toEqual({ key: "number:1", capacity: 80, windowMs: 1000 });
    expect(number({ throughputLevel: "HIGH" }).capacity).toBe(1000);
    expect(number({ kind: "coexistence", throughputLevel: "HIGH" }).capacity).toBe(20);
    expect(number({ kind: "coexistence" }).capacity).toBe(20);
    expect(wabaBucket("9")).toEqual({ key: "waba:9", capacity: 5000, windowMs: 3_600_000 });
    expect(LIMITS.waba.capacity).toBe(5000);
  });
});

describe("token bucket arithmetic", () => {
  const spec = number();

  test("an idle bucket is full and bursts to its capacity, then refuses", () => {
    const limiter = new MemoryLimiter(new ManualClock());
    const first = limiter.take(spec);
    expect(first).toEqual({ allowed: true, limit: 80, remaining: 79, resetSeconds: 1, retryAfterSeconds: null });
    expect(burst(limiter, spec, 79)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take(spec)).toEqual({
      allowed: false,
      limit: 80,
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    });
  });

  test("refill is continuous: one token per 12.5 ms at 80/s", () => {
    const clock = new ManualClock();
    const limiter = new MemoryLimiter(clock);
    burst(limiter, spec, 80);
    clock.advance(12);
    expect(limiter.take(spec).allowed).toBe(false);
    clock.advance(1);
    expect(limiter.take(spec)).toMatchObject({ allowed: true, remaining: 0 });
    clock.advance(500);
    expect(limiter.take(spec)).toMatchObject({ allowed: true, remaining: 39 }); // 0.04 + 40 - 1
    clock.advance(10_000);
    expect(limiter.take(spec)).toMatchObject({ allowed: true, remaining: 79 });
  });

  test("a WABA bucket gains a token every 0.72 s: Retry-After 1, Reset up to 3600", () => {
    const w = wabaBucket("w");
    const empty = { tokens: 0, updatedAt: 0 };
    expect(take(empty, w, 0).decision).toEqual({
      allowed: false,
      limit: 5000,
      remaining: 0,
      resetSeconds: 3600,
      retryAfterSeconds: 1,
    });
    expect(take(empty, w, 719).decision.allowed).toBe(false);
    expect(take(empty, w, 720).decision).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 3600 });
    expect(take(undefined, w, 0).decision).toMatchObject({ remaining: 4999, resetSeconds: 1 });
  });

  test("Reset counts seconds, rounded up, until full; Retry-After until one token", () => {
    const half = { tokens: 40, updatedAt: 0 };
    expect(take(half, spec, 0).decision).toMatchObject({ remaining: 39, resetSeconds: 1 });
    const slow: BucketSpec = { key: "k", capacity: 10, windowMs: 10_000 };
    expect(take({ tokens: 0.5, updatedAt: 0 }, slow, 0).decision).toMatchObject({
      allowed: false,
      retryAfterSeconds: 1,
      resetSeconds: 10,
    });
    expect(take({ tokens: 4.5, updatedAt: 0 }, slow, 0).decision).toMatchObject({
      allowed: true,
      remaining: 3,
      resetSeconds: 7,
    });
  });

  test("a capacity change applies at once: tokens never exceed the new capacity", () => {
    const state = { tokens: 900, updatedAt: 0 };
    expect(level(state, number(), 0)).toBe(80);
    expect(level({ tokens: 10, updatedAt: 0 }, number({ throughputLevel: "HIGH" }), 100)).toBe(110);
  });
});

describe("fail-open (docs/proxy.md#when-the-limiter-fails)", () => {
  const spec = number();
  const open = { allowed: true, limit: 80, remaining: 80, resetSeconds: 0, retryAfterSeconds: null };
  const step = (limiter: RateLimiter) => {
    const deps = { logger: memoryLogger(), clock: new ManualClock(), metrics: createMetrics() };
    const failedOpen = async (reason: string) =>
      (await deps.metrics.rateLimitFailOpen.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
    return { decide: rateLimitStep(limiter, deps), ...deps, failedOpen };
  };

  test("a limiter that throws lets the request through with the normal limit, full remaining, reset 0", async () => {
    const { decide, logger, failedOpen } = step({
      take: () => {
        throw new Error("boom");
      },
    });
    expect(decide(spec)).toEqual(open);
    expect(logger.lines.some((l) => l.msg === "rate limiter failed open")).toBe(true);
    expect(await failedOpen("error")).toBe(1);
  });

  test("a limiter that rejects, or answers after 50 ms, fails open; a quick answer is used", async () => {
    const rejecting = step({ take: () => Promise.reject(new Error("down")) });
    expect(await rejecting.decide(spec)).toEqual(open);
    expect(await rejecting.failedOpen("error")).toBe(1);
    const stalled = step({ take: () => new Promise<Decision>(() => {}) });
    const started = performance.now();
    expect(await stalled.decide(spec)).toEqual(open);
    expect(performance.now() - started).toBeGreaterThanOrEqual(FAIL_OPEN_AFTER_MS - 1);
    expect(await stalled.failedOpen("slow")).toBe(1);
    const refused = { allowed: false, limit: 80, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 };
    expect(await step({ take: () => Promise.resolve(refused) }).decide(spec)).toEqual(refused);
  });

  test("a limiter that knows it is unavailable is let through at once, counted apart", async () => {
    const { decide, failedOpen } = step({
      take: () => {
        throw new LimiterUnavailableError("away");
      },
    });
    expect(decide(spec)).toEqual(open);
    expect(await failedOpen("unavailable")).toBe(1);
  });

  test("every failure is counted, but logged at most once a minute, saying how many went unlogged", async () => {
    const { decide, logger, clock, failedOpen } = step({
      take: () => {
        throw new Error("down");
      },
    });
    const logged = () => logger.lines.filter((l) => l.msg === "rate limiter failed open");
    for (let i = 0; i < 100; i++) await decide(spec);
    expect(await failedOpen("error")).toBe(100);
    expect(logged()).toHaveLength(1);
    clock.advance(FAIL_OPEN_LOG_EVERY_MS - 1);
    await decide(spec);
    expect(logged()).toHaveLength(1);
    clock.advance(1);
    await decide(spec);
    expect(logged()).toHaveLength(2);
    expect(logged()[1]).toMatchObject({ reason: "error", since_last_log: 101 });
  });
});

describe("coalesced write-through", () => {
  function recordingStore(fail = false): BucketStore & { saves: BucketState[][] } {
    const saves: BucketState[][] = [];
    return {
      saves,
      loadAll: async () => [],
      async saveMany(states) {
        if (fail) throw new Error("disk full");
        saves.push(states);
      },
    };
  }

  test("many requests on a few buckets make one batch with one row per bucket", async () => {
    const clock = new ManualClock();
    const limiter = new MemoryLimiter(clock);
    const store = recordingStore();
    burst(limiter, number(), 50);
    burst(limiter, wabaBucket("w"), 500);
    expect(await flushBuckets(limiter, store)).toBe(2);
    expect(store.saves).toEqual([
      [
        { key: "number:1", tokens: 30, updatedAt: clock.now() },
        { key: "waba:w", tokens: 4500, updatedAt: clock.now() },
      ],
    ]);
    expect(await flushBuckets(limiter, store)).toBe(0);
    expect(store.saves).toHaveLength(1); // an idle flush writes nothing
  });

  test("a failed save keeps the buckets for the next flush", async () => {
    const limiter = new MemoryLimiter(new ManualClock());
    limiter.take(number());
    await expect(flushBuckets(limiter, recordingStore(true))).rejects.toThrow("disk full");
    const ok = recordingStore();
    expect(await flushBuckets(limiter, ok)).toBe(1);
  });

  test("restore fills buckets not used since start and leaves live ones alone", () => {
    const clock = new ManualClock();
    const limiter = new MemoryLimiter(clock);
    limiter.take(wabaBucket("live"));
    limiter.restore([
      { key: "number:1", tokens: 0, updatedAt: clock.now() },
      { key: "waba:live", tokens: 0, updatedAt: clock.now() },
    ]);
    expect(limiter.take(number()).allowed).toBe(false);
    expect(limiter.take(wabaBucket("live"))).toMatchObject({ allowed: true, remaining: 4998 });
  });
});
