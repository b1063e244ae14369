import type { Decision } from "../limits/token-bucket.ts";

/** Upstream response headers passed on to the caller (SPEC 4.3); every other one is dropped. */
export const PASSED_RESPONSE_HEADERS = [
  "content-type",
  "content-length",
  "content-disposition",
  "x-upstream-trace-id",
  "x-upstream-rev",
  "x-business-use-case-usage",
  "x-app-usage",
] as const;

/** Of the caller's headers only these go upstream, unchanged (SPEC 4.3). */
export const PASSED_REQUEST_HEADERS = ["content-type", "accept"] as const;

/** RateLimit-* (and Retry-After on a refusal) for a request that reached the rate-limit step (SPEC 8.1). */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
  if (decision.retryAfterSeconds !== null) headers["retry-after"] = String(decision.retryAfterSeconds);
  return headers;
}

/** The caller's response headers: the passed upstream ones plus ours (a plain record: cheaper than Headers). */
export function responseHeaders(upstream: Headers, ours: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of PASSED_RESPONSE_HEADERS) {
    const value = upstream.get(name);
    if (value !== null) headers[name] = value;
  }
  return Object.assign(headers, ours);
}
