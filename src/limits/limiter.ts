import type { Clock } from "../runtime/clock.ts";
import type { Worker } from "../runtime/worker.ts";
import type { BucketState } from "../store/types.ts";
import { take, type BucketSpec, type Decision, type Tokens } from "./token-bucket.ts";

/**
 * The rate-limit step's seam. The in-memory limiter answers synchronously; a networked one (Redis,
 * in the scale-out mode) may answer with a promise, which the proxy bounds to 50 ms.
 */
export interface RateLimiter {
  take(spec: BucketSpec): Decision | Promise<Decision>;
}

/**
 * A limiter that knows it cannot answer (its server is away): the request is let through at once
 * (fail-open: docs/proxy.md#when-the-limiter-fails) and counted as such, without waiting for the 50 ms.
 */
export class LimiterUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LimiterUnavailableError";
  }
}

/** A deployment's rate limiter and the background work it needs while the server runs (its writes, its connection). */
export interface Limits {
  limiter: RateLimiter;
  worker: Worker;
  /** Whether the shared buckets' server (Redis) answers now; absent when the buckets are this process's own. */
  healthy?: () => Promise<boolean>;
}

/**
 * Buckets in a map, never touching the database on a request. It remembers which buckets changed
 * so that a background worker can write them through in one batch (see write-through.ts).
 */
export class MemoryLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Tokens>();
  private readonly changed = new Set<string>();

  constructor(private readonly clock: Clock) {}

  take(spec: BucketSpec): Decision {
    const { next, decision } = take(this.buckets.get(spec.key), spec, this.clock.now());
    if (decision.allowed) {
      this.buckets.set(spec.key, next);
      this.changed.add(spec.key);
    }
    return decision;
  }

  /** The buckets changed since the last call, ready to be saved. */
  takeChanges(): BucketState[] {
    const out: BucketState[] = [];
    for (const key of this.changed) {
      const state = this.buckets.get(key);
      if (state) out.push({ key, tokens: state.tokens, updatedAt: state.updatedAt });
    }
    this.changed.clear();
    return out;
  }

  /** Puts back changes whose save failed, so the next flush tries them again. */
  markChanged(keys: string[]): void {
    for (const key of keys) this.changed.add(key);
  }

  /**
   * Loads saved buckets at start (before the first request in practice: SQLite answers at once).
   * A bucket already used since start keeps its live state. Capacities are not saved: they come
   * from the number's current level on the next request.
   */
  restore(states: BucketState[]): void {
    for (const saved of states) {
      if (!this.buckets.has(saved.key))
        this.buckets.set(saved.key, { tokens: saved.tokens, updatedAt: saved.updatedAt });
    }
  }
}
