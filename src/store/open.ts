import type { Config } from "../config/config.ts";
import type { Sealer } from "../crypto/sealer.ts";
import type { StartPatience } from "./postgres/patience.ts";
import type { BackgroundCheckpoints } from "./sqlite/checkpointer.ts";
import type { Store } from "./store.ts";

export interface OpenStoreOptions {
  /** The store is a server's (not the CLI's): it holds the file's lock and checkpoints in the background. */
  server?: { backgroundCheckpoints: BackgroundCheckpoints; requestLogWorker: string };
  /** Told how long each flush of the SQLite WAL took, in seconds. */
  onWalSync?: (seconds: number) => void;
  /** Told of a failure in the background (PostgreSQL: another instance's change that could not be read). */
  onError?: (error: unknown) => void;
  /** The instance this process is (see InstanceStore.self). */
  instance?: string;
  /** A server's: how it waits for a PostgreSQL server that refuses its connections at start. */
  patience?: StartPatience;
}

/**
 * The most connections one instance opens to PostgreSQL (docs/operations.md#connections): its
 * pool, the LISTEN connection every channel shares, and the request log's writer when the log is
 * kept. null on SQLite.
 */
export function connectionBudget(config: Config): number | null {
  if (config.database.kind !== "postgres") return null;
  return config.postgres.poolSize + 1 + (config.requestLog ? 1 : 0);
}

/**
 * The one place a backend is chosen: by the scheme of DATABASE_URL (docs/operations.md#configuration). Only the chosen
 * backend's modules are loaded (the PostgreSQL client costs start-up time a SQLite server never needs).
 */
export async function openStore(config: Config, sealer: Sealer, options: OpenStoreOptions = {}): Promise<Store> {
  const database = config.database;
  switch (database.kind) {
    case "sqlite":
      return (await import("./sqlite/store.ts")).openSqliteStore(database.path, sealer, {
        backgroundCheckpoints: options.server?.backgroundCheckpoints,
        serving: options.server !== undefined,
        requestLogWorker: options.server?.requestLogWorker,
        onWalSync: options.onWalSync,
        instance: options.instance,
      });
    case "postgres":
      return (await import("./postgres/store.ts")).openPostgresStore(database.url, sealer, {
        max: config.postgres.poolSize,
        directUrl: config.postgres.directUrl,
        onError: options.onError,
        instance: options.instance,
        patience: options.patience,
      });
  }
}
