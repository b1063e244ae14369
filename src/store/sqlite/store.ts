import type { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Store } from "../store.ts";
import { AuditWriter, SqliteAudit } from "./audit.ts";
import { SqliteBuckets } from "./buckets.ts";
import { startCheckpointer, type BackgroundCheckpoints } from "./checkpointer.ts";
import { SqliteDeletions } from "./deletions.ts";
import { SqliteDirectory } from "./directory.ts";
import { SqliteEndpoints } from "./endpoints.ts";
import { SqliteInstances } from "./instances.ts";
import { SqliteHistory } from "./history.ts";
import { SqliteNotifications } from "./notifications.ts";
import { SqliteOnboardings } from "./onboardings.ts";
import { SqliteOperators } from "./operators.ts";
import { SqliteSignInCounts } from "./sign-in-counts.ts";
import { SqliteOverview } from "./overview.ts";
import { SqliteQueue } from "./queue.ts";
import { SqliteRecoveries } from "./recoveries.ts";
import { openRequestLogFile, requestLogPath } from "./request-log-file.ts";
import { moveOldUsage } from "./request-log-move.ts";
import { SqliteRequestLog } from "./requests.ts";
import { SqliteRetention } from "./retention.ts";
import { openDatabase, type Db } from "./open.ts";
import { takeServerLock } from "./server-lock.ts";
import { SqliteSessions, SqliteUsers } from "./users.ts";
import { sharedSync, timedSync, walFileSync, type FileSync } from "./wal-sync.ts";

export interface SqliteStore extends Store {
  /** For capabilities whose SQLite implementation lives beside their own code. */
  readonly db: Db;
  readonly requests: SqliteRequestLog;
}

/** request-log-worker.ts from this source tree; the compiled binary's is resolved in src/main.ts. */
const REQUEST_LOG_WORKER = new URL("./request-log-worker.ts", import.meta.url).href;

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
  /** The request log's writer thread's entry (see RequestLogThread); this source tree's by default. */
  requestLogWorker?: string;
  /** The instance this process is (InstanceStore.self), as /healthz and /metrics name it. */
  instance?: string;
}

export function openSqliteStore(path: string, sealer: Sealer, options: SqliteStoreOptions = {}): SqliteStore {
  // A database in memory has no directory, no lock file, no WAL to checkpoint and no disk to wait for.
  const onDisk = path !== ":memory:";
  const { lock, db, sqlite } = openLocked(path, onDisk, options.serving === true);
  let log: ReturnType<typeof openLog>;
  try {
    log = openLog(path, onDisk, options);
  } catch (error) {
    sqlite.close();
    lock?.release();
    throw error;
  }
  const { requests, scratch } = log;
  if (onDisk) dropOrMoveOldLog(sqlite, requests, options.serving === true);
  const checkpointer =
    options.backgroundCheckpoints && onDisk ? startCheckpointer(sqlite, path, options.backgroundCheckpoints) : null;
  const { ownSync, durable } = walSync(path, onDisk, options);
  const deletions = new SqliteDeletions(sqlite);
  const audit = new AuditWriter(sqlite);
  const endpoints = new SqliteEndpoints(db, sqlite, sealer, deletions, audit);
  return {
    db,
    directory: new SqliteDirectory(db, sealer, audit),
    users: new SqliteUsers(db, audit),
    sessions: new SqliteSessions(db, audit),
    operators: new SqliteOperators(db, audit),
    signIns: new SqliteSignInCounts(sqlite),
    overview: new SqliteOverview(sqlite),
    notifications: new SqliteNotifications(db),
    requests,
    recoveries: new SqliteRecoveries(db, audit),
    onboardings: new SqliteOnboardings(db, sealer, audit),
    buckets: new SqliteBuckets(db),
    endpoints,
    queue: new SqliteQueue(sqlite, endpoints, durable, audit),
    instances: new SqliteInstances(options.instance ?? "local"),
    history: new SqliteHistory(sqlite, endpoints),
    retention: new SqliteRetention(db, deletions),
    audit: new SqliteAudit(db, audit),
    async healthy() {
      try {
        return sqlite.query("SELECT 1 AS ok").get() !== null;
      } catch {
        return false;
      }
    },
    async close() {
      // The main file first, synchronously (a caller may open it again at once); the log's thread
      // then writes what it was handed, on its own file.
      checkpointer?.stop();
      ownSync?.close();
      sqlite.close();
      lock?.release();
      await requests.close();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** The database, migrated, under the file's server lock when `serving` (see SqliteStoreOptions.serving). */
function openLocked(path: string, onDisk: boolean, serving: boolean) {
  if (onDisk) mkdirSync(dirname(path), { recursive: true });
  // Before the migrations: a newer binary must not change the schema under a running server.
  const lock = serving && onDisk ? takeServerLock(path) : null;
  try {
    return { lock, ...openDatabase(path) };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** The request log on its own file; a database in memory keeps it in a temporary one (`scratch`): the writer thread needs a file to open. */
function openLog(path: string, onDisk: boolean, options: SqliteStoreOptions) {
  const scratch = onDisk ? null : mkdtempSync(join(tmpdir(), "switchboard-"));
  const logPath = scratch ? join(scratch, "requests.db") : requestLogPath(path);
  const logFile = openRequestLogFile(logPath);
  if (onDisk) moveOldUsage(logFile, path);
  const requests = new SqliteRequestLog(
    logFile,
    { path: logPath, mainPath: onDisk ? path : null },
    options.requestLogWorker ?? REQUEST_LOG_WORKER,
  );
  return { requests, scratch };
}

/**
 * An older release's records move into the log's file on its writer thread: a server starts it
 * now. With none (every new database: migration 0012 renames the empty table) the table goes here,
 * on this connection: the thread's drop, a write on another connection to this file, could make
 * a transaction of this thread that read first fail with SQLITE_BUSY_SNAPSHOT.
 */
function dropOrMoveOldLog(sqlite: Database, requests: SqliteRequestLog, serving: boolean): void {
  if (!sqlite.query("SELECT 1 FROM sqlite_master WHERE name = 'moved_request_log'").get()) return;
  if (!sqlite.query("SELECT 1 FROM moved_request_log LIMIT 1").get()) sqlite.run("DROP TABLE moved_request_log");
  else if (serving) requests.thread.start();
}

/** How the WAL is flushed before an acknowledgement: the options' sync (timed), or the file's own on disk. */
function walSync(path: string, onDisk: boolean, options: SqliteStoreOptions) {
  const ownSync = onDisk && !options.syncWal ? walFileSync(path) : null;
  const untimed = options.syncWal ?? ownSync;
  const syncWal = untimed && options.onWalSync ? timedSync(untimed, options.onWalSync) : untimed;
  const durable = syncWal ? sharedSync(syncWal) : () => Promise.resolve();
  return { ownSync, durable };
}
