/**
 * How every dashboard response is sent: HTML with a strict Content-Security-Policy. Scripts and
 * styles come only from /dashboard/assets (no inline script, no inline style, no eval), nothing
 * may frame the page, and forms may post only to us.
 */
const POLICY: Record<string, string> = {
  "default-src": "'none'",
  "script-src": "'self'",
  "style-src": "'self'",
  "img-src": "'self'",
  "connect-src": "'self'",
  "form-action": "'self'",
  "frame-ancestors": "'none'",
  "base-uri": "'none'",
};

/** The dashboard's policy with some directives replaced (the API reference at /docs needs a style nonce). */
export function contentSecurityPolicy(changes: Record<string, string> = {}): string {
  return Object.entries({ ...POLICY, ...changes })
    .map(([directive, sources]) => `${directive} ${sources}`)
    .join("; ");
}

export const CONTENT_SECURITY_POLICY = contentSecurityPolicy();

export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
};

/** An HTML page or fragment. Never cached: pages show secrets once and per-account data. */
export function htmlResponse(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      ...SECURITY_HEADERS,
      ...headers,
    },
  });
}

/** After a form post: 303 so that a reload does not post again. */
export function seeOther(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status: 303,
    headers: { location, "cache-control": "no-store", ...SECURITY_HEADERS, ...headers },
  });
}

/** True for requests htmx made (they get a fragment instead of a whole page). */
export const isHtmx = (request: Request) => request.headers.get("hx-request") === "true";

/** Only our own dashboard paths may be the target of a post-sign-in redirect. */
export function safeNext(next: string | undefined | null): string {
  if (!next?.startsWith("/dashboard") || next.startsWith("//") || next.includes("\\")) return "/dashboard";
  return next;
}
