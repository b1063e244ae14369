import { Database } from "bun:sqlite";
import { SealError, type Sealer } from "../crypto/sealer.ts";
import { embeddedMigrations } from "../../db/migrations.gen.ts";
import { oneRow } from "../store/sqlite/one-row.ts";
import { REQUEST_LOG_SCHEMA } from "../store/sqlite/request-log-file.ts";
import { databaseSchemaDifference, requestLogSchemaDifference } from "./schema-check.ts";

/** What a database file holds, as a backup's manifest records it. */
export interface DatabaseFacts {
  /** How many migrations were applied to it (drizzle's migrator records one row per migration). */
  schemaVersion: number;
  /** Rows per table: every table but SQLite's own and the migrations' bookkeeping. */
  counts: Record<string, number>;
}

/** How many migrations the database has had (drizzle's migrator records one row for each). */
export const schemaVersionOf = (db: Database): number => count(db, "SELECT COUNT(*) AS n FROM __drizzle_migrations");

/** A database file that is not a sound Switchboard database; the message says why, in words. */
export class DamagedDatabaseError extends Error {}

const count = (db: Database, sql: string): number => oneRow<{ n: number }>(db, sql).n;

/** The tables counted in a manifest (so a table a later release adds is counted without a change here). */
export function dataTables(db: Database): string[] {
  const tables = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all();
  return tables.map((row) => row.name).filter((name) => !name.startsWith("sqlite_") && !name.startsWith("__drizzle"));
}

export function countRows(db: Database): Record<string, number> {
  return Object.fromEntries(dataTables(db).map((table) => [table, count(db, `SELECT COUNT(*) AS n FROM "${table}"`)]));
}

function readOnly(path: string): Database {
  try {
    return new Database(path, { readonly: true, strict: true });
  } catch (error) {
    throw new DamagedDatabaseError(`cannot be opened as a SQLite database: ${(error as Error).message}`);
  }
}

/** A file of a newer release than this one: it cannot be checked (nor run) by this one. */
export class NewerSchemaError extends Error {
  constructor(
    readonly version: number,
    readonly known: number,
  ) {
    super(`schema ${version}; this release knows ${known}`);
  }
}

/** SQLite's integrity check (every page, index and constraint); throws DamagedDatabaseError with the first problems. */
function checkIntegrity(db: Database): void {
  let problems: string[];
  try {
    // Its lines may hold line breaks of their own; a refusal is one line.
    const rows = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check(5)").all();
    problems = rows.map((row) => row.integrity_check.replace(/\s+/g, " ").trim());
  } catch (error) {
    throw new DamagedDatabaseError(`fails SQLite's integrity check: ${(error as Error).message.replace(/\s+/g, " ")}`);
  }
  if (problems.join() !== "ok")
    throw new DamagedDatabaseError(`fails SQLite's integrity check: ${problems.join("; ")}`);
}

/** Opens `path` read-only and checks it: integrity, then `check` (its version and schema); closes it. */
function inspect(path: string, check: (db: Database) => number, known: number): DatabaseFacts {
  const db = readOnly(path);
  try {
    checkIntegrity(db);
    const schemaVersion = check(db);
    if (schemaVersion > known) throw new NewerSchemaError(schemaVersion, known);
    return { schemaVersion, counts: countRows(db) };
  } finally {
    db.close();
  }
}

/**
 * Checks a database file the way a backup is verified before it counts, and again before it is
 * restored: SQLite's integrity check, which migrations it has, that its schema is exactly what
 * those migrations make (schema-check.ts), and how many rows each table holds. Throws
 * DamagedDatabaseError with the first problem found, NewerSchemaError for a newer release's file.
 */
export function inspectDatabase(path: string): DatabaseFacts {
  const known = embeddedMigrations.length;
  return inspect(
    path,
    (db) => {
      if (count(db, "SELECT COUNT(*) AS n FROM sqlite_master WHERE name = '__drizzle_migrations'") === 0) {
        throw new DamagedDatabaseError("is a SQLite database but not a Switchboard one (it has no migrations table)");
      }
      const version = schemaVersionOf(db);
      const different = version <= known ? databaseSchemaDifference(db, version) : null;
      if (different !== null) throw new DamagedDatabaseError(different);
      return version;
    },
    known,
  );
}

/** The same checks of a request log's file (its version is its user_version). */
export function inspectRequestLog(path: string): DatabaseFacts {
  const known = REQUEST_LOG_SCHEMA.length;
  return inspect(
    path,
    (db) => {
      const version = oneRow<{ user_version: number }>(db, "PRAGMA user_version").user_version;
      const different = version <= known ? requestLogSchemaDifference(db, version) : null;
      if (different !== null) throw new DamagedDatabaseError(different);
      return version;
    },
    known,
  );
}

/** Opens every sealed secret of one column; how many it opened. */
function openColumn(db: Database, table: string, column: string, sealer: Sealer): number {
  let opened = 0;
  const values = db.query<{ v: string }, []>(`SELECT "${column}" AS v FROM "${table}" WHERE "${column}" IS NOT NULL`);
  for (const row of values.iterate()) {
    try {
      sealer.open(row.v);
    } catch (error) {
      if (error instanceof SealError) throw new SealError(`${table}.${column}: ${error.message}`);
      throw error;
    }
    opened++;
  }
  return opened;
}

/**
 * Opens every sealed secret in the file (the `…_enc` columns: upstream tokens, app secrets, signing
 * secrets, signup codes) with `sealer`. Throws SealError naming the first column it cannot open:
 * the file was written under another ENCRYPTION_KEY. Returns how many it opened.
 */
export function openSealedSecrets(path: string, sealer: Sealer): number {
  const db = readOnly(path);
  try {
    let opened = 0;
    for (const table of dataTables(db)) {
      const columns = db.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`).all();
      for (const { name: column } of columns.filter((c) => c.name.endsWith("_enc")))
        opened += openColumn(db, table, column, sealer);
    }
    return opened;
  } finally {
    db.close();
  }
}
