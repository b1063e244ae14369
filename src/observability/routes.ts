import { Elysia } from "elysia";
import { iso } from "../admin/views.ts";
import type { LiveInstance } from "../instances/heartbeat.ts";
import type { Store } from "../store/store.ts";
import type { Metrics } from "./metrics.ts";

/**
 * /healthz (the database answers; which instance answered, and the instances it saw alive) and
 * /metrics (Prometheus text).
 */
export function opsRoutes(deps: { store: Store; metrics: Metrics; instances: () => LiveInstance[] }) {
  return new Elysia()
    .get(
      "/healthz",
      async ({ set }) => {
        const ok = await deps.store.healthy();
        set.status = ok ? 200 : 503;
        if (!ok) return { status: "database unavailable" };
        return {
          status: "ok",
          instance: deps.store.instances.self,
          instances: deps.instances().map((i) => ({
            id: i.id,
            started_at: iso(i.startedAt),
            last_beat_at: iso(i.beatAt),
          })),
        };
      },
      { detail: { tags: ["Operations"], summary: "Liveness and database check, and the instances alive" } },
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
