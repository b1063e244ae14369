import { Elysia } from "elysia";
import { AppError, type ErrorName } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "./json-depth.ts";
import { rawTarget } from "./raw-target.ts";
import { readWithin } from "./read-body.ts";
import { routeGroup } from "./request-context.ts";

/** The operator API, the dashboard and its API take small JSON or form posts. */
export const API_BODY_LIMIT = 1024 * 1024;

interface BodyRule {
  max: number;
  tooLarge: ErrorName;
  /** May the body come without a declared length (chunked)? */
  chunked: boolean;
  /** Is a JSON body's nesting checked (everything but upstream's events, which are only ever stored and split)? */
  json: boolean;
}

// Their clients (browsers, the dashboard's script, curl and HTTP libraries given a JSON text) declare the length.
const API_BODIES: BodyRule = { max: API_BODY_LIMIT, tooLarge: "body_too_large", chunked: false, json: true };

/** Elysia picks its JSON parser by the 13th character of the media type (the "j" of application/json). */
const parsedAsJson = (contentType: string | null) => contentType?.charCodeAt(12) === 0x6a;

/** The body, once its declared length is one the route's group takes: refused before anything is read otherwise. */
function declaredBody(request: Request, rule: BodyRule, declared: string | null): ReadableStream<Uint8Array> {
  if (!request.body) throw new AppError("body_not_expected");
  if (declared === null && !rule.chunked) throw new AppError("length_required");
  if (declared !== null && Number(declared) > rule.max) throw new AppError(rule.tooLarge);
  return request.body;
}

/** A JSON body nested deeper than MAX_JSON_DEPTH, refused before it is parsed and validated. */
function checkDepth(request: Request, rule: BodyRule, read: Uint8Array): void {
  if (rule.json && parsedAsJson(request.headers.get("content-type")) && nestsDeeperThan(read, MAX_JSON_DEPTH)) {
    throw new AppError(
      "invalid_request",
      `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`,
    );
  }
}

/**
 * Every body outside the proxy is read here, whole, before any route sees it (the server itself
 * caps no body, see app.ts):
 * - under its size limit: `maxEventBytes` for upstream's events (10 MB, webhooks/ingress.ts),
 *   counted as they arrive; 1 MB for the rest, declared (a larger declared length is 413 before
 *   anything is read, an undeclared one 411), so that a large post to a route open to anyone,
 *   such as POST /api/session, is never held;
 * - under the body deadline (REQUEST_BODY_TIMEOUT_MS from the headers' arrival): a body that
 *   trickles in is 408 and its connection closed, rather than holding it for as long as its
 *   sender likes;
 * - a JSON body nested deeper than MAX_JSON_DEPTH is 400 before it is parsed and validated.
 * The route then gets the request with its body in memory. Proxied calls never reach Elysia: a
 * small body is read by the proxy under the same deadline (proxy/forward.ts), a larger one streams.
 */
export function requestBodies(deps: Pick<Deps, "config" | "metrics" | "clock">, maxEventBytes: number) {
  const ms = deps.config.requestBodyTimeoutMs;
  const upstreamEvents: BodyRule = { max: maxEventBytes, tooLarge: "event_too_large", chunked: true, json: false };
  return new Elysia({ name: "request-bodies" }).onRequest(async (context) => {
    const request = context.request;
    const declared = request.headers.get("content-length");
    if (declared === "0" || (declared === null && !request.headers.has("transfer-encoding"))) return;
    const group = routeGroup(rawTarget(request.url).path);
    if (group === "proxy") return;
    const rule = group === "webhooks" ? upstreamEvents : API_BODIES;
    const body = declaredBody(request, rule, declared);
    const read = await readWithin(body, rule.max, ms, deps.clock);
    if (read === "late") {
      deps.metrics.bodyTimeouts.inc({ group });
      throw new AppError("body_timeout", `The request body did not arrive whole within ${ms / 1000} s.`);
    }
    if (read === "too_large") throw new AppError(rule.tooLarge);
    checkDepth(request, rule, read);
    // Elysia's parser and every handler read `context.request` after this hook: they get the body in memory.
    (context as { request: Request }).request = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: read,
    });
  });
}
