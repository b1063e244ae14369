import type { Logger } from "../observability/logger.ts";
import type { Worker } from "../runtime/worker.ts";
import { intervalWorker } from "../runtime/interval-worker.ts";
import type { Clock } from "../runtime/clock.ts";
import type { BucketStore } from "../store/store.ts";
import { MemoryLimiter, type Limits } from "./limiter.ts";

export const FLUSH_EVERY_MS = 1000;

/** Saves the buckets changed since the last flush in one batch; on failure they wait for the next one. */
export async function flushBuckets(limiter: MemoryLimiter, store: BucketStore): Promise<number> {
  const changes = limiter.takeChanges();
  if (changes.length === 0) return 0; // an idle second costs the database nothing
  try {
    await store.saveMany(changes);
  } catch (error) {
    limiter.markChanged(changes.map((c) => c.key));
    throw error;
  }
  return changes.length;
}

/**
 * Keeps the in-memory buckets durable without a write per request: restores them at start, then
 * writes the changed ones about once a second and a last time at shutdown.
 */
export function bucketWriteThrough(limiter: MemoryLimiter, store: BucketStore, logger: Logger): Worker {
  const flusher = intervalWorker(
    "rate-limit write-through",
    FLUSH_EVERY_MS,
    () => flushBuckets(limiter, store),
    logger,
  );
  return {
    start() {
      store.loadAll().then(
        (states) => limiter.restore(states),
        (error: unknown) => logger.error("restoring rate-limit buckets failed", { error }),
      );
      flusher.start();
    },
    stop: () => flusher.stop(),
  };
}

/** One process's buckets: in memory, written through to the store (the single-instance mode). */
export function memoryLimits(clock: Clock, store: BucketStore, logger: Logger): Limits {
  const limiter = new MemoryLimiter(clock);
  return { limiter, worker: bucketWriteThrough(limiter, store, logger) };
}
