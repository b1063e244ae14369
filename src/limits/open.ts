import type { Config } from "../config/config.ts";
import type { Logger } from "../observability/logger.ts";
import type { Clock } from "../runtime/clock.ts";
import type { BucketStore } from "../store/store.ts";
import type { Limits } from "./limiter.ts";
import { memoryLimits } from "./write-through.ts";

/**
 * The one place the rate limiter is chosen: Redis when REDIS_URL is set with a postgres://
 * DATABASE_URL (the scale-out mode, docs/operations.md#scale-out), buckets in memory written through to the store
 * otherwise (one process). The Redis client is loaded only in the scale-out mode.
 */
export async function openLimits(
  config: Config,
  deps: { clock: Clock; logger: Logger; buckets: BucketStore },
): Promise<Limits> {
  if (config.redis && config.database.kind === "postgres") {
    const { RedisLimiter } = await import("./redis/limiter.ts");
    const limiter = new RedisLimiter({ url: config.redis.url, keyPrefix: config.redis.keyPrefix, clock: deps.clock });
    return { limiter, worker: { start() {}, stop: async () => limiter.close() }, healthy: () => limiter.healthy() };
  }
  if (config.redis)
    deps.logger.warn("REDIS_URL is set but unused: rate limits are kept in this process with a SQLite DATABASE_URL");
  return memoryLimits(deps.clock, deps.buckets, deps.logger);
}
