import { RedisClient } from "bun";
import type { Clock } from "../../runtime/clock.ts";
import { FAIL_OPEN_AFTER_MS } from "../fail-open.ts";
import { LimiterUnavailableError, type RateLimiter } from "../limiter.ts";
import type { BucketSpec, Decision } from "../token-bucket.ts";
import script from "./bucket.lua" with { type: "text" };

/** After Redis failed or stalled, requests are let through without asking it for this long (then one asks again). */
export const COOL_OFF_MS = 1_000;
const SCRIPT_SHA = new Bun.CryptoHasher("sha1").update(script).digest("hex");

export interface RedisLimiterOptions {
  url: string;
  keyPrefix: string;
  clock: Clock;
}

/** The most decisions sent in one EVALSHA: bounds the time one script holds the Redis server. */
export const MAX_BATCH = 128;

interface Waiting {
  spec: BucketSpec;
  resolve(decision: Decision): void;
  reject(error: unknown): void;
}

/**
 * The buckets (docs/proxy.md#rate-limits) in Redis, shared by every instance (docs/operations.md#scale-out), computed
 * on the Redis server by its own clock, so instances' clocks never matter and a burst spread over them passes exactly a
 * bucket's capacity. The decisions asked for in one turn of the event loop go to Redis together, as
 * one EVALSHA of bucket.lua: under load a round trip and a script call serve many proxied calls,
 * which is most of what a decision costs Redis and this process (bench/RESULTS.md, Scale-out).
 *
 * Redis going away must cost the proxy nothing (the limiter fails open within 50 ms:
 * docs/proxy.md#when-the-limiter-fails): the client queues nothing while disconnected (a command fails at once), and
 * once a command failed, or an answer is 50 ms late (a stalled server or a black-holed connection, whose commands would
 * pile up), this limiter says it is unavailable for COOL_OFF_MS without sending anything, then tries
 * again; a stalled connection is replaced. Bun's client reconnects by itself.
 */
export class RedisLimiter implements RateLimiter {
  private client: RedisClient;
  /** The client's first connection: commands wait for it (once up, a disconnected client fails them at once). */
  private connected: Promise<void>;
  /** Start times (performance.now) of the commands sent and not answered yet, oldest first: Redis answers in order. */
  private pending: number[] = [];
  private coolOffUntil = Number.NEGATIVE_INFINITY;
  /** Decisions asked for in this turn of the event loop, sent together at its end. */
  private waiting: Waiting[] = [];

  constructor(private readonly options: RedisLimiterOptions) {
    [this.client, this.connected] = this.connect();
  }

  private connect(): [RedisClient, Promise<void>] {
    const client = new RedisClient(this.options.url, {
      enableOfflineQueue: false,
      autoReconnect: true,
      maxRetries: 4_294_967_295,
      connectionTimeout: 2_000,
    });
    // A failed first connection is retried by the client; the commands waiting meanwhile fail open.
    return [client, client.connect().catch(() => {})];
  }

  take(spec: BucketSpec): Promise<Decision> {
    const now = this.options.clock.now();
    if (now < this.coolOffUntil) throw new LimiterUnavailableError("Redis failed or stalled a moment ago");
    const oldest = this.pending[0];
    if (oldest !== undefined && performance.now() - oldest > FAIL_OPEN_AFTER_MS) {
      this.coolOff(now);
      // Its commands go with it (they reject), so nothing piles up behind a connection that went silent.
      this.client.close();
      [this.client, this.connected] = this.connect();
      this.pending = [];
      throw new LimiterUnavailableError("Redis stopped answering");
    }
    return new Promise<Decision>((resolve, reject) => {
      this.waiting.push({ spec, resolve, reject });
      if (this.waiting.length === MAX_BATCH) this.send();
      else if (this.waiting.length === 1) setImmediate(() => this.send());
    });
  }

  /** Sends the decisions waiting, if any (a full batch may have gone already), as one command. */
  private send(): void {
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    const started = performance.now();
    this.pending.push(started);
    const client = this.client;
    this.connected
      .then(() =>
        this.decide(
          client,
          batch.map((w) => w.spec),
        ),
      )
      .then(
        (decisions) => {
          this.settled(client, started);
          for (const [i, w] of batch.entries()) {
            const decision = decisions[i];
            if (decision) w.resolve(decision);
            else w.reject(new LimiterUnavailableError("Redis answered fewer decisions than were asked"));
          }
        },
        (error: unknown) => {
          this.settled(client, started);
          this.coolOff(this.options.clock.now());
          for (const w of batch) w.reject(error);
        },
      );
  }

  private settled(client: RedisClient, started: number): void {
    if (client !== this.client) return;
    const i = this.pending.indexOf(started);
    if (i >= 0) this.pending.splice(i, 1);
  }

  private coolOff(now: number): void {
    this.coolOffUntil = now + COOL_OFF_MS;
  }

  private async decide(client: RedisClient, specs: BucketSpec[]): Promise<Decision[]> {
    const args = [
      String(specs.length),
      ...specs.map((spec) => `${this.options.keyPrefix}bucket:${spec.key}`),
      ...specs.flatMap((spec) => [String(spec.capacity), String(spec.windowMs)]),
    ];
    let answer: number[];
    try {
      answer = (await client.send("EVALSHA", [SCRIPT_SHA, ...args])) as number[];
    } catch (error) {
      // A Redis that restarted, or had SCRIPT FLUSH, has forgotten the script: it is sent again whole.
      if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
      answer = (await client.send("EVAL", [script, ...args])) as number[];
    }
    return specs.map((spec, i) => {
      const [allowed, remaining, reset, retryAfter] = answer.slice(4 * i, 4 * i + 4).map(Number) as [
        number,
        number,
        number,
        number,
      ];
      return {
        allowed: allowed === 1,
        limit: spec.capacity,
        remaining,
        resetSeconds: reset,
        retryAfterSeconds: retryAfter < 0 ? null : retryAfter,
      };
    });
  }

  /** True when Redis answers a PING within `ms` (the operator console's overview). */
  async healthy(ms = 1_000): Promise<boolean> {
    let timer: Timer | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([
        this.connected
          .then(() => this.client.send("PING", []))
          .then(
            (answer) => answer === "PONG",
            () => false,
          ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.client.close();
  }
}
