import { Elysia } from "elysia";
import type { LiveInstance } from "../instances/heartbeat.ts";
import type { Store } from "../store/store.ts";
import type { Metrics } from "../observability/metrics.ts";
import { iso } from "./iso-time.ts";

/**
 * /healthz (the database answers; which instance answered, and the instances it saw alive) and
 * /metrics (Prometheus text). `report` adds what the operator should see without it changing the
 * status (how old the last backup is).
 */
export function opsRoutes(
  deps: { store: Store; metrics: Metrics; instances: () => LiveInstance[] },
  report: () => Record<string, unknown> = () => ({}),
) {
  return new Elysia()
    .get(
      "/healthz",
      async ({ set }) => {
        const ok = await deps.store.healthy();
        set.status = ok ? 200 : 503;
        if (!ok) return { status: "database unavailable", ...report() };
        return {
          status: "ok",
          instance: deps.store.instances.self,
          instances: deps.instances().map((i) => ({
            id: i.id,
            started_at: iso(i.startedAt),
            last_beat_at: iso(i.beatAt),
          })),
          ...report(),
        };
      },
      { detail: { tags: ["Operations"], summary: "Liveness and database check, and the instances alive" } },
    )
    .get(
      "/metrics",
      async ({ set }) => {
        set.headers["content-type"] = deps.metrics.registry.contentType;
        return deps.metrics.text();
      },
      { detail: { tags: ["Operations"], summary: "Prometheus metrics" } },
    );
}
