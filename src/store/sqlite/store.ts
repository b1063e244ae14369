import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Store } from "../store.ts";
import { SqliteBuckets } from "./buckets.ts";
import { startCheckpointer, type BackgroundCheckpoints } from "./checkpointer.ts";
import { SqliteDeletions } from "./deletions.ts";
import { SqliteDirectory } from "./directory.ts";
import { SqliteEndpoints } from "./endpoints.ts";
import { SqliteInstances } from "./instances.ts";
import { SqliteHistory } from "./history.ts";
import { SqliteNotifications } from "./notifications.ts";
import { SqliteOnboardings } from "./onboardings.ts";
import { SqliteQueue } from "./queue.ts";
import { SqliteRecoveries } from "./recoveries.ts";
import { SqliteRequestLog } from "./requests.ts";
import { SqliteRetention } from "./retention.ts";
import { openDatabase, type Db } from "./open.ts";
import { takeServerLock } from "./server-lock.ts";
import { SqliteSessions, SqliteUsers } from "./users.ts";
import { sharedSync, timedSync, walFileSync, type FileSync } from "./wal-sync.ts";

export interface SqliteStore extends Store {
  /** For capabilities whose SQLite implementation lives beside their own code. */
  readonly db: Db;
}

export interface SqliteStoreOptions {
  /** Checkpoint the WAL from a background thread (the server; see checkpointer.ts). */
  backgroundCheckpoints?: BackgroundCheckpoints;
  /** How the WAL is flushed to disk before new events are acknowledged; an fdatasync by default (see wal-sync.ts). */
  syncWal?: FileSync;
  /** Told how long each of those flushes took, in seconds (the server's metrics; see timedSync). */
  onWalSync?: (seconds: number) => void;
  /**
   * The store is a server's: it holds the file's server lock while open, and throws
   * DatabaseInUseError when another server holds it (see server-lock.ts).
   */
  serving?: boolean;
  /** The instance this process is (InstanceStore.self), as /healthz and /metrics name it. */
  instance?: string;
}

export function openSqliteStore(path: string, sealer: Sealer, options: SqliteStoreOptions = {}): SqliteStore {
  // A database in memory has no directory, no lock file, no WAL to checkpoint and no disk to wait for.
  const onDisk = path !== ":memory:";
  if (onDisk) mkdirSync(dirname(path), { recursive: true });
  // Before the migrations: a newer binary must not change the schema under a running server.
  const lock = options.serving && onDisk ? takeServerLock(path) : null;
  let opened: ReturnType<typeof openDatabase>;
  try {
    opened = openDatabase(path);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const { db, sqlite } = opened;
  const checkpointer =
    options.backgroundCheckpoints && onDisk ? startCheckpointer(sqlite, path, options.backgroundCheckpoints) : null;
  const ownSync = onDisk && !options.syncWal ? walFileSync(path) : null;
  const untimed = options.syncWal ?? ownSync;
  const syncWal = untimed && options.onWalSync ? timedSync(untimed, options.onWalSync) : untimed;
  const durable = syncWal ? sharedSync(syncWal) : () => Promise.resolve();
  const deletions = new SqliteDeletions(sqlite);
  const endpoints = new SqliteEndpoints(db, sqlite, sealer, deletions);
  return {
    db,
    directory: new SqliteDirectory(db, sealer),
    users: new SqliteUsers(db),
    sessions: new SqliteSessions(db),
    notifications: new SqliteNotifications(db),
    requests: new SqliteRequestLog(db),
    recoveries: new SqliteRecoveries(db),
    onboardings: new SqliteOnboardings(db, sealer),
    buckets: new SqliteBuckets(db),
    endpoints,
    queue: new SqliteQueue(sqlite, endpoints, durable),
    instances: new SqliteInstances(options.instance ?? "local"),
    history: new SqliteHistory(sqlite, endpoints),
    retention: new SqliteRetention(sqlite, deletions),
    async healthy() {
      try {
        return sqlite.query("SELECT 1 AS ok").get() !== null;
      } catch {
        return false;
      }
    },
    async close() {
      checkpointer?.stop();
      ownSync?.close();
      sqlite.close();
      lock?.release();
    },
  };
}
