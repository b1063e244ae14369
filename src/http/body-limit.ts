import { Elysia } from "elysia";
import { errorResponse } from "../errors/catalog.ts";
import type { Random } from "../runtime/random.ts";
import { requestIdOf, routeGroup } from "./request-context.ts";

/** The operator API, the dashboard and its API take small JSON or form posts. */
export const API_BODY_LIMIT = 1024 * 1024;

/**
 * Refuses a body declared over API_BODY_LIMIT to the operator API, the dashboard or its API before
 * it is read, and one whose length is not declared (chunked): Elysia reads a body whole to parse
 * it, and the server itself caps no body (see app.ts), so a large post to a route such as
 * POST /api/session, open to anyone, would otherwise be held in memory. Their clients (browsers,
 * the dashboard's script, curl and HTTP libraries given a JSON text) declare the length. Ingress
 * reads its own body under its own 10 MB limit, and proxied calls never reach Elysia.
 */
export function apiBodyLimit(deps: { random: Random }) {
  return new Elysia({ name: "api-body-limit" }).onRequest(({ request }) => {
    const declared = request.headers.get("content-length");
    const unbounded = declared === null ? request.headers.has("transfer-encoding") : Number(declared) > API_BODY_LIMIT;
    if (!unbounded) return;
    const group = routeGroup(new URL(request.url).pathname);
    if (group !== "admin" && group !== "api" && group !== "dashboard") return;
    // The rest of the body is never read: the connection is closed rather than left half-read.
    return errorResponse(declared === null ? "length_required" : "body_too_large", requestIdOf(undefined, deps.random), { headers: { connection: "close" } });
  });
}
