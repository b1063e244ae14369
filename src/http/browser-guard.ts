import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import { rawTarget } from "./raw-target.ts";

/** State-changing calls from a browser must come from our own origin (CSRF defence beside SameSite). */
export function checkOrigin(method: string, origin: string | null, host: string | null): void {
  if (method === "GET" || method === "HEAD" || origin === null) return;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new AppError("forbidden");
  }
  if (originHost !== host) throw new AppError("forbidden");
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The CSRF rules of a JSON API a browser calls with its session cookie, a layer beside the cookie's
 * SameSite=Strict (issue 26):
 * - a request a page of another site made, told by the browser's `Sec-Fetch-Site: cross-site`
 *   where it sent no Origin, is 403 `forbidden`;
 * - a state-changing request from another Origin is 403 `forbidden` (checkOrigin);
 * - a state-changing request with a body, or a content type, other than application/json is 415
 *   `unsupported_media_type`: the types a cross-site form (or a simple cross-site fetch) can send
 *   are form-urlencoded, multipart and text/plain; a JSON body from another origin needs a
 *   pre-flight that this service never grants.
 */
export function checkBrowserCall(request: Request): void {
  const origin = request.headers.get("origin");
  if (origin === null && request.headers.get("sec-fetch-site") === "cross-site") {
    throw new AppError("forbidden", "A request made by another site is not allowed.");
  }
  if (SAFE_METHODS.has(request.method)) return;
  checkOrigin(request.method, origin, request.headers.get("host"));
  const type = request.headers.get("content-type");
  const length = request.headers.get("content-length");
  const hasBody = (length !== null && length !== "0") || request.headers.has("transfer-encoding");
  if ((type !== null || hasBody) && type?.split(";", 1)[0]?.trim().toLowerCase() !== "application/json") {
    throw new AppError("unsupported_media_type");
  }
}

/**
 * checkBrowserCall for every request under `prefix` (/api/ today; the operator's web pages later),
 * before anything of it is read or routed.
 */
export function browserApiGuard(prefix: string) {
  return new Elysia({ name: "browser-api-guard", seed: prefix }).onRequest(({ request }) => {
    if (rawTarget(request.url).path.startsWith(prefix)) checkBrowserCall(request);
  });
}
