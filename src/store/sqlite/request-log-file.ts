import { Database } from "bun:sqlite";
import { basename, dirname, extname, join } from "node:path";
import { WAL_SIZE_LIMIT_BYTES } from "./checkpointer.ts";
import { oneRow } from "./one-row.ts";

/**
 * The request log's own SQLite file, beside the main database (`switchboard.db` →
 * `switchboard-requests.db`), with its own write-ahead log and its own writer (a thread of its
 * own, request-log-thread.ts): a batch of the log never holds the main file's writer, which
 * ingress's acknowledgements and the delivery queue wait for.
 */
export function requestLogPath(mainPath: string): string {
  const extension = extname(mainPath);
  return join(dirname(mainPath), `${basename(mainPath, extension)}-requests${extension}`);
}

/**
 * The log's schema, one entry per version (PRAGMA user_version counts those applied), each as it
 * was first written. By hand: drizzle-kit cannot declare version 1's WITHOUT ROWID. The columns are those of request-log-schema.ts, which the reads use.
 *
 * Version 2 (bench/RESULTS.md#request-log): rows in rowid order, appended at the table's end; the
 * request id (which starts with the call's time, timeOrderedIdSource) and an account's calls by
 * time are indexes filled at their ends too. Message ids are random, so their index is the one
 * written all over: it holds only a send's id's last 16 characters (and the rowid), which halves
 * the writer's time per record against the whole id in a WITHOUT ROWID table (version 1); a
 * lookup checks the whole id on the few rows it finds.
 *
 * Version 3 (issue 40): that index is sliced. Each record with a message id carries the slot of
 * the writer's it was written in (`message_slot`, a new one every SLOT_RECORDS such records), and
 * the index leads with it: a batch's entries land in the current slot's few pages instead of all
 * over an index as large as the log, and a lookup probes each slot (request-log-writes.ts,
 * requests.ts). Records from before keep a null slot, which is probed too.
 */
export const REQUEST_LOG_SCHEMA: readonly string[] = [
  `CREATE TABLE request_log (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    api_key_id TEXT NOT NULL,
    method TEXT NOT NULL,
    route TEXT,
    phone_number_id TEXT,
    waba_id TEXT,
    status INTEGER NOT NULL,
    error_code INTEGER,
    upstream_status INTEGER,
    upstream_error_code INTEGER,
    upstream_error_subcode INTEGER,
    upstream_ms REAL,
    request_bytes INTEGER,
    response_bytes INTEGER,
    message_id TEXT
  ) WITHOUT ROWID;
  CREATE INDEX request_log_account ON request_log (account_id, at);
  CREATE INDEX request_log_message ON request_log (message_id) WHERE message_id IS NOT NULL;
  CREATE TABLE usage_hours (
    account_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (account_id, hour, target_id, kind, label)
  ) WITHOUT ROWID;`,
  `ALTER TABLE request_log RENAME TO request_log_v1;
  CREATE TABLE request_log (id TEXT NOT NULL, account_id TEXT NOT NULL, at INTEGER NOT NULL, api_key_id TEXT NOT NULL,
    method TEXT NOT NULL, route TEXT, phone_number_id TEXT, waba_id TEXT, status INTEGER NOT NULL, error_code INTEGER,
    upstream_status INTEGER, upstream_error_code INTEGER, upstream_error_subcode INTEGER, upstream_ms REAL,
    request_bytes INTEGER, response_bytes INTEGER, message_id TEXT);
  INSERT INTO request_log SELECT * FROM request_log_v1 ORDER BY id;
  DROP TABLE request_log_v1;
  CREATE UNIQUE INDEX request_log_id ON request_log (id);
  CREATE INDEX request_log_account ON request_log (account_id, at);
  CREATE INDEX request_log_message_tail ON request_log (substr(message_id, -16)) WHERE message_id IS NOT NULL;`,
  `ALTER TABLE request_log ADD COLUMN message_slot INTEGER;
  DROP INDEX request_log_message_tail;
  CREATE INDEX request_log_message ON request_log (message_slot, substr(message_id, -16)) WHERE message_id IS NOT NULL;`,
];

/** Opens (creating if needed) the log's file in WAL mode and brings its schema up to date. */
export function openRequestLogFile(path: string): Database {
  const db = new Database(path, { create: true, strict: true });
  try {
    // The two threads' connections (and the CLI's) wait for each other's brief writes; first, so
    // that switching to WAL waits too for a closing connection's last checkpoint (a restart).
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA temp_store = MEMORY");
    db.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    const version = () => oneRow<{ user_version: number }>(db, "PRAGMA user_version").user_version;
    if (version() < REQUEST_LOG_SCHEMA.length) {
      db.transaction(() => {
        // Read again under the write lock: another process may have just done it.
        for (let v = version(); v < REQUEST_LOG_SCHEMA.length; v++)
          db.exec(`${REQUEST_LOG_SCHEMA[v]}; PRAGMA user_version = ${v + 1}`);
      }).immediate();
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
