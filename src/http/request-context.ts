import type { ValueError } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { AppError, errorResponse, type ErrorName } from "../errors/catalog.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { randomId } from "../runtime/random.ts";
import type { Random } from "../runtime/random.ts";
import { StoreUnavailableError } from "../store/errors.ts";
import { clientIp, type TrustedProxies } from "./client-ip.ts";
import { fieldOf, ruleOf } from "./rules.ts";

/** Which part of the service a path belongs to, for metrics and for how a 404 is worded. */
export function routeGroup(path: string): "admin" | "api" | "webhooks" | "dashboard" | "operator" | "ops" | "proxy" {
  if (path.startsWith("/admin")) return "admin";
  if (path.startsWith("/api/")) return "api";
  if (path.startsWith("/webhooks/")) return "webhooks";
  if (path.startsWith("/dashboard")) return "dashboard";
  if (path === "/operator" || path.startsWith("/operator/")) return "operator";
  if (path === "/healthz" || path === "/metrics" || path.startsWith("/docs")) return "ops";
  return "proxy";
}

/** How each part of a request Elysia validates is named in an error message. */
const PARTS = {
  query: "query parameter",
  params: "path parameter",
  body: "body field",
  headers: "header",
  cookie: "cookie",
} as const;

/** The parts of a request a refused value may have come from, as parsed. */
type Parsed = { query?: unknown; params?: unknown; body?: unknown };

/**
 * Elysia's own types (t.Numeric, …) report a value they refuse with neither its part nor its name:
 * this finds the parameter or top-level body field that holds it.
 */
function whereIs(value: unknown, parsed: Parsed): string | null {
  for (const part of ["query", "params", "body"] as const) {
    const values = parsed[part];
    if (values === null || typeof values !== "object") continue;
    for (const [name, held] of Object.entries(values)) {
      if (held === value || (typeof held === "string" && Number(held) === value)) return `${PARTS[part]} ${name}`;
    }
  }
  return null;
}

/** `body field retention: must be one of "24h", "7d"`: which part of the request, which field, which rule (http/rules.ts). */
function validationMessage(error: unknown, parsed: Parsed): string {
  const detail = error as { type?: string; value?: unknown; all?: ValueError[] } | undefined;
  const first = detail?.all?.[0];
  const what = first ? ruleOf(first) : "is not valid";
  const type = detail?.type ?? "body";
  if (!(type in PARTS)) return `${whereIs(detail?.value, parsed) ?? "A value"}: ${what}`;
  const part = PARTS[type as keyof typeof PARTS];
  const field = first?.path ? fieldOf(first.path) : "";
  return field ? `${part} ${field}: ${what}` : `${type}: ${what}`;
}

/**
 * The request's id, stamped by requestContext's onRequest; a new one only where that hook has not
 * run (an app without requestContext).
 */
export function requestIdOf(requestId: unknown, random: Random): string {
  return typeof requestId === "string" ? requestId : randomId(random, "req", 20);
}

/** What requestContext stamps on every request's context when it arrives. */
interface Stamp {
  requestId?: string;
  startedAt?: number;
  arrived?: Request;
  /** The client's address, for the request log: read on arrival, as the connection may be gone by the log's turn. */
  ip?: string | null;
}

/** What a failed request answers: our error as it is, invalid input as invalid_request, the rest by kind (and logged). */
function errorOf(
  logger: Logger,
  failure: { code: unknown; error: unknown; request: Request; path: string } & Parsed,
): { name: ErrorName; message?: string; headers?: Record<string, string> } {
  const { code, error, request, path, query, params, body } = failure;
  if (error instanceof AppError) return { name: error.errorName, message: error.message, headers: error.headers };
  if (code === "PARSE") return { name: "invalid_request", message: "The request body is not valid JSON." };
  if (code === "VALIDATION")
    return { name: "invalid_request", message: validationMessage(error, { query, params, body }) };
  if (error instanceof StoreUnavailableError) {
    logger.warn("database unavailable", { method: request.method, path, error: error.message });
    return { name: "unavailable" };
  }
  if (code === "NOT_FOUND") {
    const group = routeGroup(path);
    return { name: group === "admin" || group === "api" ? "not_found" : "unknown_route" };
  }
  logger.error("unhandled error", { method: request.method, path, error });
  return { name: "internal" };
}

/**
 * Gives every request an id (sent back as X-Proxy-Request-Id and used as trace_id), renders every
 * error of ours in the one envelope, logs each request with the status it was sent and counts it.
 * The id is stamped when the request arrives, before any other hook, so a request refused before
 * routing (its body too large, too slow, not JSON) is logged under the id its answer carries.
 */
export function requestContext(deps: {
  random: Random;
  logger: Logger;
  metrics: Metrics;
  config: { trustedProxies: TrustedProxies };
}) {
  return (
    new Elysia({ name: "request-context" })
      .onRequest((context) => {
        (context as Stamp).requestId = randomId(deps.random, "req", 20);
        (context as Stamp).startedAt = performance.now();
        // The request as its connection delivered it: a later hook may put a copy in `request`.
        (context as Stamp).arrived = context.request;
        (context as Stamp).ip = clientIp(deps.config.trustedProxies, context.server, context.request);
      })
      // For handlers' types: the values are the ones stamped above (`arrived`: see client-ip.ts).
      .derive({ as: "global" }, (context) => ({
        requestId: requestIdOf((context as Stamp).requestId, deps.random),
        startedAt: (context as Stamp).startedAt ?? performance.now(),
        ip: (context as Stamp).ip,
      }))
      .onAfterHandle({ as: "global" }, ({ set, requestId }) => {
        set.headers["x-proxy-request-id"] = requestId;
      })
      // Only the fields it names: Elysia builds, for every route, whatever context its hooks read,
      // and a hook that takes the whole context has every request's cookies, query and headers
      // parsed (about 50 µs per request, bench/RESULTS.md).
      .onError({ as: "global" }, ({ code, error, request, path, set, requestId, query, params, body }) => {
        const traceId = requestIdOf(requestId, deps.random);
        const { name, message, headers } = errorOf(deps.logger, { code, error, request, path, query, params, body });
        const response = errorResponse(name, traceId, { message, headers });
        // Elysia sets its own status before an error reaches here (422 for any failed validation) and
        // sends this response as it is; the access log reads set.status.
        set.status = response.status;
        return response;
      })
      .onAfterResponse({ as: "global" }, ({ request, path, set, responseValue, requestId, startedAt, ip }) => {
        // A handler may answer with a Response of its own: Elysia sends its status, or set.status in place of a 200.
        const setStatus = typeof set.status === "number" ? set.status : 200;
        const status =
          responseValue instanceof Response && responseValue.status !== 200 ? responseValue.status : setStatus;
        const group = routeGroup(path);
        deps.metrics.httpRequests.inc({ group, status: `${Math.floor(status / 100)}xx` });
        if (group !== "ops") {
          deps.logger.info("request", {
            request_id: requestId,
            method: request.method,
            path,
            status,
            ip: ip ?? null,
            ms: startedAt === undefined ? undefined : Math.round((performance.now() - startedAt) * 10) / 10,
          });
        }
      })
  );
}
