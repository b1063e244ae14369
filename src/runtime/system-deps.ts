import type { Config } from "../config/config.ts";
import { devEncryptionKey } from "../config/dev-key.ts";
import { createSealer } from "../crypto/sealer.ts";
import type { Logger } from "../observability/logger.ts";
import { createMetrics } from "../observability/metrics.ts";
import { openSqliteStore } from "../store/sqlite/store.ts";
import { systemClock } from "./clock.ts";
import type { Deps } from "./deps.ts";
import { cryptoRandom } from "./random.ts";
import { systemResolver } from "./resolver.ts";

/** What only a server does with its database (the CLI beside it does neither). */
export interface ServerOptions {
  /** The background checkpoint thread's entry (see BackgroundCheckpoints.workerUrl). */
  checkpointWorker: string;
}

/**
 * The real world: the configured database, the system clock, DNS, randomness and fetch. A server
 * also holds the database's server lock and checkpoints it from a background thread.
 */
export function systemDeps(config: Config, logger: Logger, server?: ServerOptions): Deps {
  const key = config.encryptionKey ?? devEncryptionKey(config.databasePath, cryptoRandom);
  const backgroundCheckpoints = server === undefined ? undefined : {
    workerUrl: server.checkpointWorker,
    onError: (message: string) => logger.error("background WAL checkpoints failed; SQLite checkpoints as it commits", { error: message }),
  };
  const metrics = createMetrics();
  return {
    config,
    store: openSqliteStore(config.databasePath, createSealer(key, cryptoRandom), {
      backgroundCheckpoints,
      serving: server !== undefined,
      onWalSync: (seconds) => metrics.walSync.observe(seconds),
    }),
    clock: systemClock,
    random: cryptoRandom,
    resolver: systemResolver,
    fetch: (input, init) => fetch(input, init),
    logger,
    metrics,
  };
}
