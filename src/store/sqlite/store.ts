import type { Sealer } from "../../crypto/sealer.ts";
import type { Store } from "../store.ts";
import { SqliteBuckets } from "./buckets.ts";
import { startCheckpointer, type BackgroundCheckpoints } from "./checkpointer.ts";
import { SqliteDirectory } from "./directory.ts";
import { SqliteNotifications } from "./notifications.ts";
import { openDatabase, type Db } from "./open.ts";
import { SqliteSessions, SqliteUsers } from "./users.ts";
import { SqliteWebhooks } from "./webhooks.ts";

export interface SqliteStore extends Store {
  /** For capabilities whose SQLite implementation lives beside their own code. */
  readonly db: Db;
}

export interface SqliteStoreOptions {
  /** Checkpoint the WAL from a background thread (the server; see checkpointer.ts). */
  backgroundCheckpoints?: BackgroundCheckpoints;
}

export function openSqliteStore(path: string, sealer: Sealer, options: SqliteStoreOptions = {}): SqliteStore {
  const { db, sqlite } = openDatabase(path);
  const checkpointer = options.backgroundCheckpoints && path !== ":memory:"
    ? startCheckpointer(sqlite, path, options.backgroundCheckpoints)
    : null;
  return {
    db,
    directory: new SqliteDirectory(db, sealer),
    users: new SqliteUsers(db),
    sessions: new SqliteSessions(db),
    notifications: new SqliteNotifications(db),
    buckets: new SqliteBuckets(db),
    webhooks: new SqliteWebhooks(db, sqlite, sealer),
    healthy() {
      try {
        return sqlite.query("SELECT 1 AS ok").get() !== null;
      } catch {
        return false;
      }
    },
    close() {
      checkpointer?.stop();
      sqlite.close();
    },
  };
}
