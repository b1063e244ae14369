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
 * natively, instead of wrapping it in a new Response and a JavaScript stream.) Bun's `toJSON` lists
 * the names in one native call: a third less garbage a call than `forEach`'s callback per header
 * (the collector's pauses are the proxy's tail, bench/RESULTS.md, issue 40).
 */
export function keepResponseHeaders(headers: Headers, ours: Record<string, string>): Headers {
  for (const name in headers.toJSON()) if (!PASSED_RESPONSE.has(name)) headers.delete(name);
  for (const name in ours) headers.set(name, ours[name] as string);
  return headers;
}

/**
 * The caller's headers of an answer the proxy makes anew from upstream's bytes (a send's, read for
 * its message id): the passed ones and ours, as a plain object, so that the new Response copies
 * neither a whole Headers nor what is dropped from it.
 */
export function passedResponseHeaders(headers: Headers, ours: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of PASSED_RESPONSE_HEADERS) {
    const value = headers.get(name);
    if (value !== null) kept[name] = value;
  }
  for (const name in ours) kept[name] = ours[name] as string;
  return kept;
}
