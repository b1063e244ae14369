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

/**
 * The real world: the configured database, the system clock, DNS, randomness and fetch. A server
 * also checkpoints its database from a background thread (`checkpointWorker`, its entry's URL).
 */
export function systemDeps(config: Config, logger: Logger, options: { checkpointWorker?: string } = {}): Deps {
  const key = config.encryptionKey ?? devEncryptionKey(config.databasePath, cryptoRandom);
  const backgroundCheckpoints = options.checkpointWorker === undefined ? undefined : {
    workerUrl: options.checkpointWorker,
    onError: (message: string) => logger.error("background WAL checkpoints failed; SQLite checkpoints as it commits", { error: message }),
  };
  return {
    config,
    store: openSqliteStore(config.databasePath, createSealer(key, cryptoRandom), { backgroundCheckpoints }),
    clock: systemClock,
    random: cryptoRandom,
    resolver: systemResolver,
    fetch: (input, init) => fetch(input, init),
    logger,
    metrics: createMetrics(),
  };
}
