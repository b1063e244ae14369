import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Clock } from "../runtime/clock.ts";
import { LimiterUnavailableError, type RateLimiter } from "./limiter.ts";
import { failOpenDecision, type BucketSpec, type Decision } from "./token-bucket.ts";

/** docs/proxy.md#when-the-limiter-fails: a limiter that errors or takes longer than this lets the request through. */
export const FAIL_OPEN_AFTER_MS = 50;
/** A limiter failing for every request is said so in the log once a minute, not once a request. */
export const FAIL_OPEN_LOG_EVERY_MS = 60_000;

/** Why a request was let through unlimited: the limiter threw or rejected, was slower than 50 ms, or said it is unavailable. */
export type FailOpenReason = "error" | "slow" | "unavailable";

/**
 * The proxy's rate-limit step (docs/proxy.md#order-of-checks step 8): asks the limiter, failing open on an error or
 * after 50 ms, each time counted in /metrics (switchboard_rate_limit_fail_open_total) and logged
 * at most once a minute. A synchronous answer (the in-memory limiter) is returned as is, so the
 * common path costs no promise and no timer.
 */
export function rateLimitStep(limiter: RateLimiter, deps: { logger: Logger; clock: Clock; metrics: Metrics }) {
  let loggedAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  const failOpen = (spec: BucketSpec, reason: FailOpenReason, error?: unknown) => {
    deps.metrics.rateLimitFailOpen.inc({ reason });
    unlogged++;
    const now = deps.clock.now();
    if (now - loggedAt >= FAIL_OPEN_LOG_EVERY_MS) {
      deps.logger.warn("rate limiter failed open", { bucket: spec.key, reason, error, since_last_log: unlogged });
      loggedAt = now;
      unlogged = 0;
    }
    return failOpenDecision(spec);
  };
  const reasonOf = (error: unknown): FailOpenReason =>
    error instanceof LimiterUnavailableError ? "unavailable" : "error";

  return function decide(spec: BucketSpec): Decision | Promise<Decision> {
    let answer: Decision | Promise<Decision>;
    try {
      answer = limiter.take(spec);
    } catch (error) {
      return failOpen(spec, reasonOf(error), error);
    }
    if (!(answer instanceof Promise)) return answer;
    return new Promise<Decision>((resolve) => {
      // Whichever comes first, once: the answer, its failure, or the 50 ms.
      let settled = false;
      const settle = (decision: () => Decision) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(decision());
      };
      const timer = setTimeout(() => settle(() => failOpen(spec, "slow")), FAIL_OPEN_AFTER_MS);
      answer.then(
        (decision) => settle(() => decision),
        (error: unknown) => settle(() => failOpen(spec, reasonOf(error), error)),
      );
    });
  };
}
