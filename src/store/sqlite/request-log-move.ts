import type { Database } from "bun:sqlite";

/** Old records copied per step: each step is one short transaction of the writer thread, between batches. */
const STEP_ROWS = 5_000;
const COLUMNS = `id, account_id, at, api_key_id, method, route, phone_number_id, waba_id, status, error_code, upstream_status,
  upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id`;

/**
 * An older release kept the log in the main database; its migration 0012 renamed the tables to
 * these, and here their rows move into the log's file and the tables are dropped (with their indexes).
 */
export const MOVED_TABLES = ["moved_request_log", "moved_usage_hours"] as const;

// Every copy is OR IGNORE and every drop comes after its copy, so a move cut short is simply done
// again (SQLite commits a transaction over two WAL files file by file).

/** Attaches the main database as `old`; the moved tables it still holds. */
function attachOld(db: Database, mainPath: string): Set<string> {
  db.run("ATTACH DATABASE ? AS old", [mainPath]);
  return new Set(
    db
      .query<{ name: string }, []>(
        `SELECT name FROM old.sqlite_master WHERE type = 'table' AND name IN (${MOVED_TABLES.map((t) => `'${t}'`).join(", ")})`,
      )
      .all()
      .map((t) => t.name),
  );
}

/**
 * The usage counts, whole, when the log's file is opened and before anything is counted in it
 * (their table is small: a row per number, hour and outcome): a count of the same hour added to
 * the log's file before the move would make the copy's OR IGNORE lose the old one.
 */
export function moveOldUsage(db: Database, mainPath: string): void {
  try {
    if (!attachOld(db, mainPath).has("moved_usage_hours")) return;
    db.transaction(() => {
      db.run(
        "INSERT OR IGNORE INTO main.usage_hours SELECT account_id, target_id, hour, kind, label, count FROM old.moved_usage_hours",
      );
      db.run("DROP TABLE old.moved_usage_hours");
    }).immediate();
  } finally {
    db.run("DETACH DATABASE old");
  }
}

/**
 * The records, a step at a time in key order (each fills the B-trees at their end), by the writer
 * thread once the server runs: a log of millions of calls would hold the start for a minute, and
 * its calls are only history. Each step returns whether more are left; the last drops the old
 * table. Null when there is nothing to move.
 */
export function oldLogMover(db: Database, mainPath: string): { step(): boolean } | null {
  if (!attachOld(db, mainPath).has("moved_request_log")) {
    db.run("DETACH DATABASE old");
    return null;
  }
  const stepEnd = db.prepare<{ end: string | null }, [string]>(
    `SELECT max(id) AS end FROM (SELECT id FROM old.moved_request_log WHERE id > ? ORDER BY id LIMIT ${STEP_ROWS})`,
  );
  const copy = db.prepare(
    `INSERT OR IGNORE INTO main.request_log (${COLUMNS}) SELECT ${COLUMNS} FROM old.moved_request_log WHERE id > ? AND id <= ? ORDER BY id`,
  );
  let after = "";
  const step = db.transaction((): boolean => {
    const end = stepEnd.get(after)?.end ?? null;
    if (end === null) return false;
    copy.run(after, end);
    after = end;
    return true;
  });
  return {
    step() {
      if (step.immediate()) return true;
      stepEnd.finalize();
      copy.finalize();
      db.run("DROP TABLE old.moved_request_log");
      db.run("DETACH DATABASE old");
      return false;
    },
  };
}

/** The whole move at once (`switchboard migrate` copies the log's file right after). */
export function moveOldLog(db: Database, mainPath: string): void {
  moveOldUsage(db, mainPath);
  const mover = oldLogMover(db, mainPath);
  while (mover?.step());
}
