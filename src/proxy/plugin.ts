import { Elysia } from "elysia";
import { rawTarget, type RawTarget } from "../http/raw-target.ts";
import { routeGroup } from "../http/request-context.ts";

/**
 * Mounts the proxy in front of Elysia's router: every path outside /admin, /api, /webhooks,
 * /dashboard, /docs, /healthz and /metrics is answered here, before routing and before any body
 * parsing, so the body stream reaches upstream untouched. A listening server answers proxied
 * calls from `proxyRoute` below before this hook is reached; the hook serves `app.handle()`.
 */
export function proxyPlugin(handle: ProxyHandler) {
  return new Elysia({ name: "proxy" }).onRequest(({ request }) => {
    const target = rawTarget(request.url);
    if (routeGroup(target.path) === "proxy") return handle(request, target);
  });
}

/** The proxy, given the request and its raw target (read once: `request.url` builds a new string on every read). */
type ProxyHandler = (request: Request, target: RawTarget) => Promise<Response>;

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * The same mount as a Bun native route, for `serve.routes`: Elysia puts its own routes in Bun's
 * router, so only paths none of them match reach this catch-all, which answers proxied calls
 * without the context Elysia's general handler would build first (bench/RESULTS.md, Proxy) and
 * hands anything else (unknown /admin paths, /docs assets) back to Elysia.
 */
export function proxyRoute(handle: ProxyHandler, elysia: Handler): Record<string, Handler> {
  return {
    "/*": (request) => {
      const target = rawTarget(request.url);
      return routeGroup(target.path) === "proxy" ? handle(request, target) : elysia(request);
    },
  };
}
