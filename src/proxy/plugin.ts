import { closedIfUnread } from "../http/unread-body.ts";
import { rawTarget, type RawTarget } from "../http/raw-target.ts";
import { routeGroup } from "../http/request-context.ts";

/** The proxy, given the request and its raw target (read once: `request.url` builds a new string on every read). */
type ProxyHandler = (request: Request, target: RawTarget) => Promise<Response>;

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * Mounts the proxy as a Bun native route, for `serve.routes`: Elysia puts its own routes in Bun's
 * router, so only paths none of them match reach this catch-all. It answers every path outside
 * /admin, /api, /webhooks, /dashboard, /operator, /docs, /healthz and /metrics before any body parsing (the
 * body stream reaches upstream untouched, without the context Elysia's general handler would
 * build first: bench/RESULTS.md, Proxy) and hands anything else back to Elysia.
 */
export function proxyRoute(handle: ProxyHandler, elysia: Handler): Record<string, Handler> {
  return {
    "/*": async (request) => {
      const target = rawTarget(request.url);
      return closedIfUnread(
        request,
        await (routeGroup(target.path) === "proxy" ? handle(request, target) : elysia(request)),
      );
    },
  };
}
