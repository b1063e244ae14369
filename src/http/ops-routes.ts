import { Elysia } from "elysia";
import type { Store } from "../store/store.ts";
import type { Metrics } from "../observability/metrics.ts";

/**
 * /healthz (the database answers) and /metrics (Prometheus text). `report` adds what the operator
 * should see without it changing the status (how old the last backup is).
 */
export function opsRoutes(
  deps: { store: Store; metrics: Metrics },
  report: () => Record<string, unknown> = () => ({}),
) {
  return new Elysia()
    .get(
      "/healthz",
      async ({ set }) => {
        const ok = await deps.store.healthy();
        set.status = ok ? 200 : 503;
        return { status: ok ? "ok" : "database unavailable", ...report() };
      },
      { detail: { tags: ["Operations"], summary: "Liveness and database check" } },
    )
    .get(
      "/metrics",
      async ({ set }) => {
        set.headers["content-type"] = deps.metrics.registry.contentType;
        return deps.metrics.registry.metrics();
      },
      { detail: { tags: ["Operations"], summary: "Prometheus metrics" } },
    );
}
