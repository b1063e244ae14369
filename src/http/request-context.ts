import { Elysia } from "elysia";
import { AppError, errorResponse, type ErrorName } from "../errors/catalog.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { randomId } from "../runtime/random.ts";
import type { Random } from "../runtime/random.ts";
import { StoreUnavailableError } from "../store/errors.ts";

/** Which part of the service a path belongs to, for metrics and for how a 404 is worded. */
export function routeGroup(path: string): "admin" | "api" | "webhooks" | "dashboard" | "ops" | "proxy" {
  if (path.startsWith("/admin")) return "admin";
  if (path.startsWith("/api/")) return "api";
  if (path.startsWith("/webhooks/")) return "webhooks";
  if (path.startsWith("/dashboard")) return "dashboard";
  if (path === "/healthz" || path === "/metrics" || path.startsWith("/docs")) return "ops";
  return "proxy";
}

function validationMessage(error: unknown): string {
  const detail = error as { all?: { path?: string; message?: string }[] } | undefined;
  const first = detail?.all?.[0];
  if (!first) return "The request body is not valid.";
  const where = first.path ? first.path.replace(/^\//, "").replaceAll("/", ".") : "body";
  return `${where}: ${first.message ?? "is not valid"}`;
}

/**
 * The request's id from requestContext's derive, or a new one where derive has not run (routing
 * itself failed: NOT_FOUND, PARSE).
 */
export function requestIdOf(requestId: unknown, random: Random): string {
  return typeof requestId === "string" ? requestId : randomId(random, "req", 20);
}

/**
 * Gives every request an id (sent back as X-Proxy-Request-Id and used as trace_id), renders every
 * error of ours in the one envelope, logs each request and counts it.
 */
export function requestContext(deps: { random: Random; logger: Logger; metrics: Metrics }) {
  return new Elysia({ name: "request-context" })
    .derive({ as: "global" }, () => ({
      requestId: randomId(deps.random, "req", 20),
      startedAt: performance.now(),
    }))
    .onAfterHandle({ as: "global" }, ({ set, requestId }) => {
      set.headers["x-proxy-request-id"] = requestId;
    })
    // Only the fields it names: Elysia builds, for every route, whatever context its hooks read,
    // and a hook that takes the whole context has every request's cookies, query and headers
    // parsed (about 50 µs per request, bench/RESULTS.md).
    .onError({ as: "global" }, ({ code, error, request, path, requestId }) => {
      const traceId = requestIdOf(requestId, deps.random);
      let name: ErrorName;
      let message: string | undefined;
      let headers: Record<string, string> | undefined;
      if (error instanceof AppError) {
        name = error.errorName;
        message = error.message;
        headers = error.headers;
      } else if (code === "VALIDATION" || code === "PARSE") {
        name = "invalid_request";
        message = code === "PARSE" ? "The request body is not valid JSON." : validationMessage(error);
      } else if (error instanceof StoreUnavailableError) {
        name = "unavailable";
        deps.logger.warn("database unavailable", { method: request.method, path, error: error.message });
      } else if (code === "NOT_FOUND") {
        const group = routeGroup(path);
        name = group === "admin" || group === "api" ? "not_found" : "unknown_route";
      } else {
        name = "internal";
        deps.logger.error("unhandled error", { method: request.method, path, error });
      }
      return errorResponse(name, traceId, { message, headers });
    })
    .onAfterResponse({ as: "global" }, ({ request, path, set, requestId, startedAt }) => {
      const status = typeof set.status === "number" ? set.status : 200;
      const group = routeGroup(path);
      deps.metrics.httpRequests.inc({ group, status: `${Math.floor(status / 100)}xx` });
      if (group !== "ops") {
        deps.logger.info("request", {
          request_id: requestId,
          method: request.method,
          path,
          status,
          ms: startedAt === undefined ? undefined : Math.round((performance.now() - startedAt) * 10) / 10,
        });
      }
    });
}
