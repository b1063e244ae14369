import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { embeddedMigrations } from "../../db/migrations.gen.ts";
import { applyMigrations, migrationHash } from "../store/sqlite/migrate.ts";
import { REQUEST_LOG_SCHEMA } from "../store/sqlite/request-log-file.ts";
import { MOVED_TABLES } from "../store/sqlite/request-log-move.ts";

/**
 * A restored file runs this release's code, triggers and views included: its schema must be
 * exactly what this release's migrations make, from an empty file, up to the version it states.
 * A trigger, view, table or index they would not make (a trigger that copies a password hash, an
 * audit entry that deletes itself) is refused, and so is one they would make differently.
 */

/** One schema object as sqlite_master holds it. */
interface SchemaObject {
  type: string;
  name: string;
  table: string;
  sql: string | null;
}

/** SQLite's own tables that `ANALYZE` (or `PRAGMA optimize`) adds, as SQLite itself declares them. */
const STATISTICS: Record<string, string> = {
  sqlite_stat1: "CREATE TABLE sqlite_stat1(tbl,idx,stat)",
  sqlite_stat4: "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)",
};

/**
 * Statements' text as compared: SQLite keeps a CREATE as it was written, so whitespace runs are one
 * space and none is kept beside parentheses and commas.
 */
const normal = (sql: string | null) =>
  sql
    ?.replace(/\s+/g, " ")
    .replace(/ ?([(),]) ?/g, "$1")
    .trim() ?? null;

function objectsOf(db: Database): Map<string, SchemaObject> {
  const rows = db
    .query<SchemaObject, []>('SELECT type, name, tbl_name AS "table", sql FROM sqlite_master ORDER BY type, name')
    .all();
  return new Map(
    rows
      .filter((row) => !(row.type === "table" && normal(row.sql) === STATISTICS[row.name]))
      .map((row) => [`${row.type} ${row.name}`, { ...row, sql: normal(row.sql) }]),
  );
}

/**
 * The first way `actual`'s schema differs from `expected`'s, in words; null when they are the same.
 * Objects of `mayBeGone` tables may be missing (dropped at run time, not by a migration).
 */
function difference(
  actual: Map<string, SchemaObject>,
  expected: Map<string, SchemaObject>,
  mayBeGone: readonly string[] = [],
): string | null {
  for (const [key, found] of actual) {
    const made = expected.get(key);
    if (made === undefined) return `holds a ${found.type} "${found.name}" that this release's migrations do not make`;
    if (made.sql !== found.sql || made.table !== found.table) {
      return `holds a ${found.type} "${found.name}" unlike the one this release's migrations make`;
    }
  }
  for (const [key, made] of expected) {
    if (!actual.has(key) && !mayBeGone.includes(made.table))
      return `lacks the ${made.type} "${made.name}" that this release's migrations make`;
  }
  return null;
}

/** Runs `fill` on a new database in memory and returns its schema. */
function madeFromEmpty(fill: (db: Database) => void): Map<string, SchemaObject> {
  const db = new Database(":memory:", { strict: true });
  try {
    fill(db);
    return objectsOf(db);
  } finally {
    db.close();
  }
}

/**
 * Whether the database's schema is what this release's first `version` migrations make, and its
 * migrations are theirs (the same hashes, in order); the difference in words, or null.
 */
export function databaseSchemaDifference(db: Database, version: number): string | null {
  const recorded = db.query<{ hash: string }, []>("SELECT hash FROM __drizzle_migrations ORDER BY id").all();
  for (const [i, { hash }] of recorded.entries()) {
    const ours = embeddedMigrations[i];
    if (ours === undefined || migrationHash(ours.sql) !== hash) {
      return `records a migration ${i + 1} that is not this release's ${ours ? ours.tag : "(it has fewer)"}`;
    }
  }
  return difference(
    objectsOf(db),
    madeFromEmpty((empty) => applyMigrations(drizzle(empty), version)),
    // The request log's tables a migration left in the database, until they moved to the log's file.
    MOVED_TABLES,
  );
}

/** Whether the request log file's schema is what this release makes of an empty one up to `version`. */
export function requestLogSchemaDifference(db: Database, version: number): string | null {
  return difference(
    objectsOf(db),
    madeFromEmpty((empty) => {
      for (const statements of REQUEST_LOG_SCHEMA.slice(0, version)) empty.exec(statements);
    }),
  );
}
