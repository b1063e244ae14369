import { swagger } from "@elysiajs/swagger";
import { Elysia } from "elysia";
import { accountApiRoutes } from "./account-api/routes.ts";
import { adminRoutes } from "./admin/routes.ts";
import { sessionRoutes } from "./auth/session-routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { requestContext } from "./http/request-context.ts";
import { opsRoutes } from "./observability/routes.ts";
import type { Deps, Worker } from "./runtime/deps.ts";

/** Bun's own cap; our proxy enforces 100 MB itself and must see the body first to answer 413 in our envelope. */
const MAX_REQUEST_BODY = 200 * 1024 * 1024;

/**
 * Builds the whole service from injected dependencies. Nothing starts until the app listens:
 * background workers start with the server and are stopped (and flushed) after it stops accepting.
 */
export function createApp(deps: Deps) {
  const workers: Worker[] = [];
  return new Elysia({
    serve: {
      maxRequestBodySize: MAX_REQUEST_BODY,
      // Upstream media calls may take 120 s; Bun's default 10 s idle time-out would drop them.
      idleTimeout: 255,
    },
  })
    .use(requestContext(deps))
    .use(
      swagger({
        path: "/docs",
        exclude: [/^\/(?!admin|api)/],
        documentation: {
          info: {
            title: "Switchboard",
            version: "1",
            description: "Operator API (bearer ADMIN_TOKEN) and dashboard API (session cookie from POST /api/session).",
          },
          components: { securitySchemes: { adminToken: { type: "http", scheme: "bearer" } } },
        },
      }),
    )
    .use(opsRoutes(deps))
    .use(adminRoutes(deps))
    .use(sessionRoutes(deps))
    .use(accountApiRoutes(deps))
    .use(dashboardRoutes(deps))
    .onStart(() => {
      for (const worker of workers) worker.start();
    })
    .onStop(async () => {
      for (const worker of workers) await worker.stop();
    });
}

export type App = ReturnType<typeof createApp>;
