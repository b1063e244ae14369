import type { Config } from "../config/config.ts";
import type { Sealer } from "../crypto/sealer.ts";
import { openPostgresStore } from "./postgres/store.ts";
import type { BackgroundCheckpoints } from "./sqlite/checkpointer.ts";
import { openSqliteStore } from "./sqlite/store.ts";
import type { Store } from "./store.ts";

export interface OpenStoreOptions {
  /** The store is a server's (not the CLI's): it holds the file's lock and checkpoints in the background. */
  server?: { backgroundCheckpoints: BackgroundCheckpoints };
  /** Told how long each flush of the SQLite WAL took, in seconds. */
  onWalSync?: (seconds: number) => void;
  /** Told of a failure in the background (PostgreSQL: another instance's change that could not be read). */
  onError?: (error: unknown) => void;
  /** The instance this process is (see InstanceStore.self). */
  instance?: string;
}

/** The one place a backend is chosen: by the scheme of DATABASE_URL (CONTRACT 2). */
export async function openStore(config: Config, sealer: Sealer, options: OpenStoreOptions = {}): Promise<Store> {
  const database = config.database;
  switch (database.kind) {
    case "sqlite":
      return openSqliteStore(database.path, sealer, {
        backgroundCheckpoints: options.server?.backgroundCheckpoints,
        serving: options.server !== undefined,
        onWalSync: options.onWalSync,
        instance: options.instance,
      });
    case "postgres":
      return openPostgresStore(database.url, sealer, { onError: options.onError, instance: options.instance });
  }
}
