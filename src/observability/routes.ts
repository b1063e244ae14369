import { Elysia } from "elysia";
import type { Store } from "../store/store.ts";
import type { Metrics } from "./metrics.ts";

/** /healthz (the database answers) and /metrics (Prometheus text). */
export function opsRoutes(deps: { store: Store; metrics: Metrics }) {
  return new Elysia()
    .get(
      "/healthz",
      async ({ set }) => {
        const ok = await deps.store.healthy();
        set.status = ok ? 200 : 503;
        return { status: ok ? "ok" : "database unavailable" };
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
