import type { Sealer } from "../../crypto/sealer.ts";
import type { Store } from "../store.ts";
import { SqliteBuckets } from "./buckets.ts";
import { SqliteDirectory } from "./directory.ts";
import { SqliteNotifications } from "./notifications.ts";
import { openDatabase, type Db } from "./open.ts";
import { SqliteSessions, SqliteUsers } from "./users.ts";
import { SqliteWebhooks } from "./webhooks.ts";

export interface SqliteStore extends Store {
  /** For capabilities whose SQLite implementation lives beside their own code. */
  readonly db: Db;
}

export function openSqliteStore(path: string, sealer: Sealer): SqliteStore {
  const { db, sqlite } = openDatabase(path);
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
      sqlite.close();
    },
  };
}
