import Counter from "prom-client/lib/counter";
import Gauge from "prom-client/lib/gauge";
import Histogram from "prom-client/lib/histogram";
import Registry from "prom-client/lib/registry";
import type { Registry as MetricRegistry } from "prom-client";

/**
 * prom-client's default metrics (process, event loop, GC, heap size), installed at the first scrape:
 * their modules (perf_hooks, v8, the tracing API) are loaded then, not at every start. The heap
 * spaces' are left out: Bun answers v8.getHeapSpaceStatistics() by walking the whole heap, on the
 * server's thread, which held every request 20-45 ms at each scrape (bench/RESULTS.md). The heap's
 * size and use stay (switchboard_nodejs_heap_size_*_bytes, from process.memoryUsage()).
 */
async function installDefaultMetrics(registry: MetricRegistry): Promise<void> {
  const modules = await Promise.all([
    import("prom-client/lib/metrics/processCpuTotal"),
    import("prom-client/lib/metrics/processStartTime"),
    import("prom-client/lib/metrics/osMemoryHeap"),
    import("prom-client/lib/metrics/processOpenFileDescriptors"),
    import("prom-client/lib/metrics/processMaxFileDescriptors"),
    import("prom-client/lib/metrics/eventLoopLag"),
    import("prom-client/lib/metrics/processResources"),
    import("prom-client/lib/metrics/processHandles"),
    import("prom-client/lib/metrics/processRequests"),
    import("prom-client/lib/metrics/heapSizeAndUsed"),
    import("prom-client/lib/metrics/version"),
    import("prom-client/lib/metrics/gc"),
  ]);
  const config = { prefix: "switchboard_", eventLoopMonitoringPrecision: 10 };
  for (const module of modules) module.default(registry, config);
}

/** What serving measures: requests by group and status, proxied calls, upstream's latency, events and their 200s. */
function servingMetrics(registry: MetricRegistry, collect: () => void) {
  return {
    httpRequests: new Counter({
      name: "switchboard_http_requests_total",
      help: "HTTP requests answered, by route group and status class.",
      labelNames: ["group", "status"] as const,
      registers: [registry],
      collect,
    }),
    bodyTimeouts: new Counter({
      name: "switchboard_http_body_timeouts_total",
      help: "Requests answered 408 because their body had not arrived whole within REQUEST_BODY_TIMEOUT_MS, by route group (proxy: a body read before it is forwarded).",
      labelNames: ["group"] as const,
      registers: [registry],
    }),
    proxyRequests: new Counter({
      name: "switchboard_proxy_requests_total",
      help: "Proxied calls by outcome: upstream status, or our own error code.",
      labelNames: ["outcome"] as const,
      registers: [registry],
      collect,
    }),
    upstreamLatency: new Histogram({
      name: "switchboard_upstream_seconds",
      help: "Time from forwarding a proxied call to upstream's response headers.",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
      registers: [registry],
    }),
    webhookEvents: new Counter({
      name: "switchboard_webhook_events_total",
      help: "Upstream webhook events received, by result.",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
    webhookAckLatency: new Histogram({
      name: "switchboard_webhook_ack_seconds",
      help: "Time from an accepted upstream event's body having arrived whole to its 200 being ready: checked, stored and flushed to disk.",
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [registry],
    }),
    walSync: new Histogram({
      name: "switchboard_wal_sync_seconds",
      help: "Time each flush of the database's write-ahead log to disk took, until the server's thread had its outcome; accepted webhook events wait for one before their 200.",
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  };
}

/** The parts behind the requests: the request log's writer, the rate limiter, deliveries and backups. */
function workMetrics(registry: MetricRegistry) {
  return {
    requestLogDropped: new Counter({
      name: "switchboard_request_log_dropped_total",
      help: "Request log records dropped because the buffer was full or a write failed; the calls themselves were served.",
      registers: [registry],
    }),
    requestLogWriterRestarts: new Counter({
      name: "switchboard_request_log_writer_restarts_total",
      help: "Times the request log's writer (on SQLite, its thread) died and was started again; the batches it had not written went to the new one.",
      registers: [registry],
    }),
    rateLimitFailOpen: new Counter({
      name: "switchboard_rate_limit_fail_open_total",
      help: "Proxied calls let through unlimited because the rate limiter failed (docs/proxy.md#when-the-limiter-fails), by reason: error, slow (over 50 ms) or unavailable (its server is away).",
      labelNames: ["reason"] as const,
      registers: [registry],
    }),
    deliveryAttempts: new Counter({
      name: "switchboard_delivery_attempts_total",
      help: "Webhook delivery attempts, by outcome.",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    backupLastSuccess: new Gauge({
      name: "switchboard_backup_last_success_timestamp_seconds",
      help: "When the newest verified backup's snapshot was taken (Unix time); absent until one is known.",
      registers: [registry],
    }),
    backupLastBytes: new Gauge({
      name: "switchboard_backup_last_size_bytes",
      help: "The stored (compressed) size of the newest verified backup.",
      registers: [registry],
    }),
    backupLastDuration: new Gauge({
      name: "switchboard_backup_last_duration_seconds",
      help: "How long the newest backup this process took lasted, from its start until it was verified and stored.",
      registers: [registry],
    }),
    backupFailures: new Counter({
      name: "switchboard_backup_failures_total",
      help: "Backups that failed, by stage: snapshot, verify, upload, or prune (deleting backups past BACKUP_KEEP, after a new one counted).",
      labelNames: ["stage"] as const,
      registers: [registry],
    }),
  };
}

/** Upkeep: retention, the delivery queue's length, PostgreSQL connections and the instances alive. */
function upkeepMetrics(registry: MetricRegistry) {
  return {
    retentionRemoved: new Counter({
      name: "switchboard_retention_removed_rows_total",
      help: "Rows the retention purge deleted, by policy (webhook_history counts deliveries and events; attempts go with their delivery).",
      labelNames: ["policy"] as const,
      registers: [registry],
    }),
    retentionSeconds: new Histogram({
      name: "switchboard_retention_seconds",
      help: "How long each run of a retention policy took, by policy.",
      labelNames: ["policy"] as const,
      buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10, 60, 300],
      registers: [registry],
    }),
    retentionFailures: new Counter({
      name: "switchboard_retention_failures_total",
      help: "Runs of a retention policy that failed (logged; the others ran, and the next run tries it again), by policy.",
      labelNames: ["policy"] as const,
      registers: [registry],
    }),
    deliveriesPending: new Gauge({
      name: "switchboard_deliveries_pending",
      help: "Deliveries waiting for an attempt or a retry.",
      registers: [registry],
    }),
    databaseConnectionsMax: new Gauge({
      name: "switchboard_database_connections_max",
      help: "The most connections this instance opens to PostgreSQL: DATABASE_POOL_SIZE, the LISTEN connection and the request log's writer (absent on SQLite).",
      registers: [registry],
    }),
    instancesLive: new Gauge({
      name: "switchboard_instance_live",
      help: "1 for each instance this one saw beating within INSTANCE_DEAD_AFTER_MS (itself included), by instance id.",
      labelNames: ["id"] as const,
      registers: [registry],
    }),
    leasesTakenBack: new Counter({
      name: "switchboard_leases_taken_back_total",
      help: "Leases this instance took back from instances it took for dead (their deliveries were claimable again at once).",
      registers: [registry],
    }),
  };
}

/** One registry per app (never prom-client's global one), so two apps in one test process do not mix. */
export function createMetrics() {
  const registry = new Registry();
  let defaults: Promise<void> | null = null;
  /** Hot paths that count in plain tallies add them to their counters here, before a scrape reads them. */
  const beforeCollect = new Set<() => void>();
  const collect = () => {
    for (const flush of beforeCollect) flush();
  };
  return {
    registry,
    /** The Prometheus text of every metric (the default ones installed on the first call). */
    async text(): Promise<string> {
      defaults ??= installDefaultMetrics(registry);
      await defaults;
      return registry.metrics();
    },
    beforeCollect,
    // In this order: the order they are registered, listed and documented in.
    ...servingMetrics(registry, collect),
    ...workMetrics(registry),
    ...upkeepMetrics(registry),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
