import { Elysia } from "elysia";
import { rawTarget } from "../http/raw-target.ts";
import { routeGroup } from "../http/request-context.ts";

/**
 * Mounts the proxy in front of Elysia's router: every path outside /admin, /api, /webhooks,
 * /dashboard, /docs, /healthz and /metrics is answered here, before routing and before any body
 * parsing, so the body stream reaches upstream untouched and routing costs nothing per call.
 */
export function proxyPlugin(handle: (request: Request) => Promise<Response>) {
  return new Elysia({ name: "proxy" }).onRequest(({ request }) => {
    if (routeGroup(rawTarget(request.url).path) === "proxy") return handle(request);
  });
}
