import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import { rawTarget } from "./raw-target.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * What a browser's Sec-Fetch-Site says of a request another origin's page made: another site's,
 * or (`same-site`) a sibling origin's, such as another subdomain, whose requests carry even
 * SameSite=Strict cookies.
 */
const OTHER_ORIGIN = new Set(["cross-site", "same-site"]);

const FROM_ELSEWHERE = "A request made by another site or origin is not allowed.";

/**
 * State-changing calls from a browser must come from our own origin (CSRF defence beside
 * SameSite): one from another `Origin` is 403 `forbidden`, and so is one without `Origin` that
 * the browser marks as another site's or origin's. A request with neither header (a script, curl)
 * passes: it carries no browser's cookies by itself.
 */
export function checkOrigin(request: Request): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.get("origin");
  if (origin === null) {
    if (OTHER_ORIGIN.has(request.headers.get("sec-fetch-site") ?? "")) throw new AppError("forbidden", FROM_ELSEWHERE);
    return;
  }
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new AppError("forbidden");
  }
  if (originHost !== request.headers.get("host")) throw new AppError("forbidden");
}

/** The body types an HTML form of ours posts (the operator console's pages). */
const FORM_TYPES = new Set(["application/json", "application/x-www-form-urlencoded"]);

/**
 * The CSRF rules of a JSON API a browser calls with its session cookie, a layer beside the cookie's
 * SameSite=Strict (issue 26):
 * - a read a page of another site made, told by the browser's `Sec-Fetch-Site: cross-site`
 *   where it sent no Origin, is 403 `forbidden`;
 * - a state-changing request from another Origin, or without one from another site or origin,
 *   is 403 `forbidden` (checkOrigin);
 * - a state-changing request with a body, or a content type, other than application/json is 415
 *   `unsupported_media_type`: the types a cross-site form (or a simple cross-site fetch) can send
 *   are form-urlencoded, multipart and text/plain; a JSON body from another origin needs a
 *   pre-flight that this service never grants.
 * With `forms` (server-rendered pages that post HTML forms), a form-urlencoded body is also taken,
 * so the Origin rules carry the defence; a page read (GET) is not checked: a link from another
 * site may open it, and SameSite=Strict sends no cookie with that navigation.
 */
export function checkBrowserCall(request: Request, { forms = false }: { forms?: boolean } = {}): void {
  if (SAFE_METHODS.has(request.method)) {
    if (!forms && !request.headers.has("origin") && request.headers.get("sec-fetch-site") === "cross-site") {
      throw new AppError("forbidden", FROM_ELSEWHERE);
    }
    return;
  }
  checkOrigin(request);
  const type = request.headers.get("content-type");
  const length = request.headers.get("content-length");
  const hasBody = (length !== null && length !== "0") || request.headers.has("transfer-encoding");
  const mediaType = (type ?? "").split(";")[0]?.trim().toLowerCase();
  if ((type !== null || hasBody) && !(forms ? FORM_TYPES.has(mediaType ?? "") : mediaType === "application/json")) {
    throw new AppError("unsupported_media_type");
  }
}

/**
 * checkBrowserCall for every request under `prefix` (/api/, and the operator console with
 * `forms`), before anything of it is read or routed.
 */
export function browserApiGuard(prefix: string, options: { forms?: boolean } = {}) {
  return new Elysia({ name: "browser-api-guard", seed: prefix }).onRequest(({ request }) => {
    if (rawTarget(request.url).path.startsWith(prefix)) checkBrowserCall(request, options);
  });
}
