import { hostname } from "node:os";
import type { Config } from "./config/config.ts";
import { deploymentKey } from "./crypto/dev-key.ts";
import { createSealer } from "./crypto/sealer.ts";
import { openLimits } from "./limits/open.ts";
import type { Logger } from "./observability/logger.ts";
import { createMetrics } from "./observability/metrics.ts";
import { connectionBudget, openStore } from "./store/open.ts";
import { postgresName } from "./config/readers.ts";
import { systemClock } from "./runtime/clock.ts";
import type { Deps } from "./deps.ts";
import { cryptoRandom } from "./runtime/random.ts";
import { systemResolver } from "./runtime/resolver.ts";

/** What only a server does with its database (the CLI beside it does neither). */
export interface ServerOptions {
  /** The background checkpoint thread's entry (see BackgroundCheckpoints.workerUrl). */
  checkpointWorker: string;
  /** The request log's writer thread's entry (see RequestLogThread). */
  requestLogWorker: string;
}

/**
 * A server's instance id, unless INSTANCE_ID gives one: no two live servers on one machine listen
 * on one port, so it stays the same across a server's restarts and is no other live one's (on a
 * port the system picks, PORT=0, the process's own).
 */
function instanceId(config: Config): string {
  if (config.instances.id !== null) return config.instances.id;
  return `${hostname()}:${config.port === 0 ? `pid${process.pid}` : config.port}`;
}

/**
 * The real world: the configured database, the system clock, DNS, randomness and fetch. A server
 * also holds the database's server lock and checkpoints it from a background thread.
 */
export async function systemDeps(config: Config, logger: Logger, server?: ServerOptions): Promise<Deps> {
  const key = deploymentKey(config, cryptoRandom);
  const metrics = createMetrics();
  const store = await openStore(config, createSealer(key, cryptoRandom), {
    server: server && {
      backgroundCheckpoints: {
        workerUrl: server.checkpointWorker,
        onError: (message: string) =>
          logger.error("background WAL checkpoints failed; SQLite checkpoints as it commits", { error: message }),
      },
      requestLogWorker: server.requestLogWorker,
    },
    onWalSync: (seconds) => metrics.walSync.observe(seconds),
    onError: (error) => logger.error("reading another instance's change failed; the next refresh reloads", { error }),
    instance: server && instanceId(config),
    // A server waits for a slot (docs/operations.md#connections); a command line fails at once.
    patience:
      server && config.database.kind === "postgres"
        ? {
            database: postgresName(config.database.url),
            timeoutMs: config.postgres.startTimeoutMs,
            now: () => systemClock.now(),
            sleep: (ms) => Bun.sleep(ms),
            onRefused: ({ attempt, reason, retryInMs }) =>
              logger.warn("PostgreSQL refused the connection; trying again", {
                attempt,
                reason,
                retry_in_ms: retryInMs,
              }),
          }
        : undefined,
  });
  const budget = connectionBudget(config);
  if (budget !== null) metrics.databaseConnectionsMax.set(budget);
  return {
    config,
    store,
    limits: await openLimits(config, { clock: systemClock, logger, buckets: store.buckets }),
    clock: systemClock,
    random: cryptoRandom,
    resolver: systemResolver,
    fetch: (input, init) => fetch(input, init),
    logger,
    metrics,
    // Only a server makes spans (the CLI beside it makes none); the SDK is loaded only then.
    tracing:
      server === undefined || config.tracing === null
        ? undefined
        : (await import("./observability/tracing-sdk.ts")).createTracing(config.tracing),
  };
}
