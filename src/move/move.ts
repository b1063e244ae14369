import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { openDatabase } from "../store/sqlite/open.ts";
import { openRequestLogFile, requestLogPath } from "../store/sqlite/request-log-file.ts";
import { moveOldLog } from "../store/sqlite/request-log-move.ts";
import { takeServerLock } from "../store/sqlite/server-lock.ts";
import { connect } from "../store/postgres/connect.ts";
import { applyMigrations } from "../store/postgres/migrate.ts";
import { addDueWork } from "../store/postgres/queue.ts";
import { jsonBatches, rowAsJson } from "./rows.ts";
import { planTables, type TablePlan } from "./tables.ts";

/** Rows per insert, and the JSON text one insert may carry (event bodies go as hex). */
const BATCH_ROWS = 1_000;
const BATCH_BYTES = 8 * 1024 * 1024;

type Row = Parameters<typeof rowAsJson>[0];

/** rowid, or the primary key's columns of a table declared WITHOUT ROWID. */
function keyColumns(sqlite: Database, table: string): string[] {
  const declared = sqlite
    .query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(table);
  if (!declared) throw new Error(`no table ${table} in the SQLite file`);
  if (!/WITHOUT\s+ROWID/i.test(declared.sql)) return ["rowid"];
  return sqlite
    .query<{ name: string; pk: number }, []>(`PRAGMA table_info("${table}")`)
    .all()
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
}

/** How a row is named to the operator: its id, or its key when the table has no id column. */
function rowName(row: Row, keys: string[]): string {
  if (typeof row.id === "string" || typeof row.id === "number") return String(row.id);
  return keys.map((k) => `${k} ${String(row[k])}`).join(", ");
}

export interface MoveProgress {
  /** Called before the copy with every table's row count, then after each batch and each table. */
  planned(tables: { name: string; rows: number }[]): void;
  copied(table: string, rows: number): void;
  finished(table: string): void;
}

/** The target holds data already: a move never merges into it. */
export class TargetNotEmptyError extends Error {
  constructor(readonly tables: string[]) {
    super(`the target database already holds data (${tables.join(", ")}); move into an empty database`);
    this.name = "TargetNotEmptyError";
  }
}

/**
 * Copies a whole SQLite deployment into PostgreSQL (docs/operations.md#scale-out): every table both have, of the
 * main file and of the request log's file beside it, in ONE transaction, so a move that fails leaves
 * the target empty and can simply be run again. The files are first brought up to this build's
 * schema, as a start of this build would, and the main file's server lock is held throughout
 * (DatabaseInUseError while a server runs on it). Returns the rows copied per table.
 */
export async function moveToPostgres(
  sqlitePath: string,
  postgresUrl: string,
  progress: MoveProgress,
): Promise<Record<string, number>> {
  const lock = takeServerLock(sqlitePath);
  const files: Database[] = [];
  try {
    files.push(openDatabase(sqlitePath).sqlite);
    const log = openRequestLogFile(requestLogPath(sqlitePath));
    files.push(log);
    moveOldLog(log, sqlitePath);
  } catch (error) {
    for (const file of files) file.close();
    lock.release();
    throw error;
  }
  const pg = connect(postgresUrl, { max: 2 }).$client;
  try {
    await applyMigrations(pg);
    const tables: (TablePlan & { file: Database })[] = [];
    for (const file of files) for (const plan of await planTables(file, pg)) tables.push({ ...plan, file });
    const nonEmpty: string[] = [];
    // due_deliveries is PostgreSQL's own (filled from the deliveries copied), so no plan names it.
    for (const table of [...tables, { name: "due_deliveries" }]) {
      if ((await pg.unsafe(`SELECT EXISTS (SELECT 1 FROM "${table.name}") AS any`))[0].any) nonEmpty.push(table.name);
    }
    if (nonEmpty.length > 0) throw new TargetNotEmptyError(nonEmpty);
    const planned = tables.map((t) => ({
      name: t.name,
      rows: (t.file.query(`SELECT COUNT(*) AS n FROM "${t.name}"`).get() as { n: number }).n,
    }));
    progress.planned(planned);
    await pg.begin(async (tx) => {
      for (const table of tables) {
        await copyTable(table.file, tx as unknown as SQL, table, (n) => progress.copied(table.name, n));
        progress.finished(table.name);
      }
      await addDueWork(tx);
    });
    return Object.fromEntries(planned.map((t) => [t.name, t.rows]));
  } finally {
    await pg.close();
    for (const file of files) file.close();
    lock.release();
  }
}

/**
 * Reads the table in key order a batch at a time (its rowid, or its primary key for a table
 * without one), each batch one insert or a few.
 */
async function copyTable(sqlite: Database, tx: SQL, table: TablePlan, copied: (rows: number) => void): Promise<void> {
  const names = table.columns.map((c) => `"${c.name}"`).join(", ");
  const keys = keyColumns(sqlite, table.name);
  const key = keys.map((k) => `"${k}"`).join(", ");
  const after = keys.map((_, i) => `$k${i}`).join(", ");
  const first = sqlite.query(`SELECT ${key}, ${names} FROM "${table.name}" ORDER BY ${key} LIMIT ${BATCH_ROWS}`);
  const next = sqlite.query(
    `SELECT ${key}, ${names} FROM "${table.name}" WHERE (${key}) > (${after}) ORDER BY ${key} LIMIT ${BATCH_ROWS}`,
  );
  const insert = `INSERT INTO "${table.name}" (${names}) SELECT ${names} FROM json_populate_recordset(NULL::"${table.name}", $1::text::json)`;
  let rows = first.all() as Row[];
  for (let last = rows.at(-1); last !== undefined; last = rows.at(-1)) {
    for (const batch of jsonBatches(
      rows.map((row) => rowAsJson(row, table, () => rowName(row, keys))),
      BATCH_BYTES,
    )) {
      await tx.unsafe(insert, [batch.json]);
      copied(batch.rows);
    }
    rows = next.all(Object.fromEntries(keys.map((k, i) => [`k${i}`, last[k] as string | number]))) as Row[];
  }
  for (const column of table.serials) {
    await tx.unsafe(
      `SELECT setval(pg_get_serial_sequence('"${table.name}"', '${column}'), GREATEST(COALESCE(MAX("${column}"), 0), 1), MAX("${column}") IS NOT NULL) FROM "${table.name}"`,
    );
  }
}
