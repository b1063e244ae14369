import { SECURITY_HEADERS } from "../http/security-headers.ts";

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

/** Only our own paths under `home` (the dashboard's, or the operator console's) may be the target of a post-sign-in redirect. */
export function safeNext(next: string | undefined | null, home = "/dashboard"): string {
  if (!next?.startsWith(home) || next.startsWith("//") || next.includes("\\")) return home;
  return next;
}
