import type { Logger } from "../observability/logger.ts";
import type { RateLimiter } from "./limiter.ts";
import { failOpenDecision, type BucketSpec, type Decision } from "./token-bucket.ts";

/** SPEC 8.1: a limiter that errors or takes longer than this lets the request through. */
export const FAIL_OPEN_AFTER_MS = 50;

/**
 * Asks the limiter, failing open on an error or after 50 ms. A synchronous answer (the in-memory
 * limiter) is returned as is, so the common path costs no promise and no timer.
 */
export function decide(limiter: RateLimiter, spec: BucketSpec, logger: Logger): Decision | Promise<Decision> {
  const failOpen = (reason: string, error?: unknown) => {
    logger.warn("rate limiter failed open", { bucket: spec.key, reason, error });
    return failOpenDecision(spec);
  };
  let answer: Decision | Promise<Decision>;
  try {
    answer = limiter.take(spec);
  } catch (error) {
    return failOpen("error", error);
  }
  if (!(answer instanceof Promise)) return answer;
  return new Promise<Decision>((resolve) => {
    const timer = setTimeout(() => resolve(failOpen("slow")), FAIL_OPEN_AFTER_MS);
    answer.then(
      (decision) => resolve(decision),
      (error: unknown) => resolve(failOpen("error", error)),
    ).finally(() => clearTimeout(timer));
  });
}
