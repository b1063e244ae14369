import { Elysia } from "elysia";
import { accountApiRoutes } from "./account-api/routes.ts";
import { adminRoutes } from "./admin/routes.ts";
import { bySystem } from "./audit/entry.ts";
import { recordedBackup } from "./backup/audit.ts";
import { backupsOf } from "./backup/backups.ts";
import { backupRoutes } from "./backup/routes.ts";
import { scheduledBackups } from "./backup/schedule.ts";
import { activityRoutes } from "./account-api/activity.ts";
import { sessionRoutes } from "./auth/session-routes.ts";
import { consoleRoutes } from "./console/routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { apiDocs } from "./http/api-docs.ts";
import { browserApiGuard } from "./http/browser-guard.ts";
import { controlCharacterGuard } from "./http/control-chars.ts";
import { hostGuard } from "./http/host-guard.ts";
import { requestBodies } from "./http/request-body.ts";
import { caughtUpDirectory } from "./http/caught-up.ts";
import { requestContext } from "./http/request-context.ts";
import { opsRoutes } from "./http/ops-routes.ts";
import { adminAccess } from "./operators/admin-access.ts";
import { operatorSessionRoutes } from "./operators/routes.ts";
import type { Deps } from "./deps.ts";
import { Heartbeat } from "./instances/heartbeat.ts";
import type { Worker } from "./runtime/worker.ts";
import { RetentionWorker } from "./retention/worker.ts";
import { intervalWorker } from "./runtime/interval-worker.ts";
import { createProxy } from "./proxy/pipeline.ts";
import { RequestLog } from "./requests/log.ts";
import { requestRoutes } from "./requests/routes.ts";
import { messageRoutes } from "./messages/routes.ts";
import { proxyRoute } from "./proxy/plugin.ts";
import { MAX_EVENT_BYTES } from "./webhooks/ingress.ts";
import { webhookRelay } from "./webhooks/relay.ts";
import { onboardingRoutes } from "./onboarding/routes.ts";

/**
 * No cap of the server's own: a body over one is answered by Bun with a bare 413, before any check,
 * so a proxied call declaring more than it would get 413 without its envelope even with no API key
 * (the key is checked first: docs/proxy.md#order-of-checks). Each reader bounds its own body instead: the proxy 100 MB,
 * counted as it streams; everything else is read by requestBodies: ingress 10 MB, the rest 1 MB.
 */
const MAX_REQUEST_BODY = Number.MAX_SAFE_INTEGER;

/**
 * The service's background work, in the order it starts (and stops): the relay's queue and event
 * counts, the rate limits, the directory's refresh, retention, the request log, scheduled backups
 * and, last, this instance's heartbeat.
 */
function backgroundWork(deps: Deps, webhooks: ReturnType<typeof webhookRelay>) {
  const retention = new RetentionWorker(deps);
  const workers: Worker[] = [
    webhooks.dispatcher,
    webhooks.events.worker,
    deps.limits.worker,
    // The CLI (or another instance) may change accounts, keys or numbers while the server runs.
    intervalWorker("directory refresh", 1000, () => deps.store.directory.refresh(), deps.logger),
    retention,
  ];
  const requestLog =
    deps.config.requestLog &&
    new RequestLog(
      { store: deps.store.requests, clock: deps.clock, metrics: deps.metrics, logger: deps.logger },
      deps.config.requestLog.buffer,
    );
  if (requestLog) workers.push(requestLog.worker());
  // A backup holds every call the server was told of before it began: the records in memory are written first.
  const backups = backupsOf({ ...deps, beforeSnapshot: requestLog ? () => requestLog.flush() : undefined });
  // A scheduled backup is the service's own, in the audit log.
  const backupWorker =
    backups &&
    scheduledBackups(backups, deps.config.backup.schedule, deps.clock, deps.logger, () =>
      recordedBackup(deps, backups.create(), bySystem("backup_schedule")),
    );
  if (backupWorker) workers.push(backupWorker);
  // Stopped last: this instance leaves the list once its delivery attempts have ended.
  const heartbeat = new Heartbeat(deps);
  workers.push(heartbeat);
  return { workers, retention, requestLog, backups, backupWorker, heartbeat };
}

/**
 * Builds the whole service from injected dependencies. Nothing starts until the app listens:
 * background workers start with the server; `shutdown()` stops accepting, lets in-flight requests
 * finish, then stops the workers (which flush their state).
 */
export function createApp(deps: Deps) {
  const webhooks = webhookRelay(deps);
  const { workers, retention, requestLog, backups, backupWorker, heartbeat } = backgroundWork(deps, webhooks);
  const proxy = createProxy(deps, deps.limits.limiter, requestLog);
  // Set once the app exists: the proxy's native route hands non-proxied paths back to Elysia.
  let elysia: (request: Request) => Response | Promise<Response> = () => new Response(null, { status: 503 });
  const app = new Elysia({
    // An unknown body field is an error (a typo such as `billingStatus` must not be dropped silently).
    // Set here because a plugin's routes are compiled with the root instance's configuration.
    normalize: false,
    serve: {
      maxRequestBodySize: MAX_REQUEST_BODY,
      // Upstream media calls may take 120 s; Bun's default 10 s idle time-out would drop them.
      idleTimeout: 255,
      routes: proxyRoute(proxy, (request) => elysia(request)),
    },
  })
    .use(requestContext(deps))
    // Generic input guards, in this order, for every route: see each one's file.
    .use(hostGuard())
    .use(browserApiGuard("/api/"))
    // The operator console's JSON sign-in is an API like /api's; its pages post HTML forms.
    .use(browserApiGuard("/operator/session"))
    .use(browserApiGuard("/operator", { forms: true }))
    .use(requestBodies(deps, MAX_EVENT_BYTES))
    .use(controlCharacterGuard())
    .use(caughtUpDirectory(deps))
    .use(apiDocs())
    .use(opsRoutes({ ...deps, instances: () => heartbeat.live() }, () => backupWorker?.report() ?? {}))
    .use(adminRoutes(deps))
    .use(backupRoutes(deps, backups, (request, ip) => adminAccess(deps, request, ip)))
    .use(sessionRoutes(deps))
    .use(webhooks.routes)
    .use(accountApiRoutes(deps))
    .use(requestRoutes(deps))
    .use(activityRoutes(deps))
    .use(messageRoutes(deps))
    .use(onboardingRoutes(deps, webhooks))
    .use(dashboardRoutes(deps, webhooks))
    .use(operatorSessionRoutes(deps))
    .use(consoleRoutes(deps, backups))
    .onStart(() => {
      for (const worker of workers) worker.start();
    });
  elysia = (request) => app.fetch(request);
  let stopping: Promise<void> | undefined;
  return Object.assign(app, {
    /** The relay's URL rules and dispatcher, for code that runs beside the server (the demo seed). */
    relay: { urlRules: webhooks.urlRules, dispatcher: webhooks.dispatcher, events: webhooks.events },
    /** The request log's buffer (null when REQUEST_LOG=0); tests flush it instead of waiting a second. */
    requestLog,
    /** The retention purges (src/retention/); tests run them instead of waiting for the clock's minute. */
    retention,
    /** Scheduled backups (null without a SQLite file); tests run its tick instead of waiting for the clock's second. */
    backups: backupWorker,
    /** Idempotent; Elysia's own onStop hooks are not awaited, so the workers are stopped here. */
    shutdown(): Promise<void> {
      stopping ??= (async () => {
        if (app.server) await app.stop();
        for (const worker of workers) await worker.stop();
      })();
      return stopping;
    },
  });
}

export type App = ReturnType<typeof createApp>;
