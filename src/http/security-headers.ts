/**
 * The headers every page we serve carries (the dashboard, its assets, the API reference at /docs),
 * with a strict Content-Security-Policy: scripts and styles come only from our own paths (no inline
 * script, no inline style, no eval), nothing may frame the page, and forms may post only to us.
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

/** The policy with some directives replaced (the API reference at /docs needs a style nonce). */
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
