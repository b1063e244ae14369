import type { Decision } from "../limits/token-bucket.ts";

/** Upstream response headers passed on to the caller (docs/proxy.md#what-comes-back); every other one is dropped. */
export const PASSED_RESPONSE_HEADERS = [
  "content-type",
  "content-length",
  "content-disposition",
  "x-upstream-trace-id",
  "x-upstream-rev",
  "x-business-use-case-usage",
  "x-app-usage",
] as const;

/** Of the caller's headers only these go upstream, unchanged (docs/proxy.md#what-goes-upstream). */
export const PASSED_REQUEST_HEADERS = ["content-type", "accept"] as const;

/**
 * RateLimit-* (and Retry-After on a refusal) for a request that reached the rate-limit step
 * (docs/proxy.md#rate-limit-headers).
 */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
  if (decision.retryAfterSeconds !== null) headers["retry-after"] = String(decision.retryAfterSeconds);
  return headers;
}

const PASSED_RESPONSE = new Set<string>(PASSED_RESPONSE_HEADERS);

/**
 * Turns upstream's response headers, in place, into the caller's: only the passed ones, plus ours.
 * (Editing them lets the proxy answer with upstream's own Response, whose body Bun then streams
 * natively, instead of wrapping it in a new Response and a JavaScript stream.)
 */
export function keepResponseHeaders(headers: Headers, ours: Record<string, string>): Headers {
  const dropped: string[] = [];
  headers.forEach((_, name) => {
    if (!PASSED_RESPONSE.has(name)) dropped.push(name);
  });
  for (const name of dropped) headers.delete(name);
  for (const [name, value] of Object.entries(ours)) headers.set(name, value);
  return headers;
}
