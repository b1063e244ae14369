import { Database, type Statement } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { Row } from "../delivery-rows.ts";
import * as schema from "./schema.ts";
import { applyMigrations } from "./migrate.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Opens (creating if needed) the SQLite file in WAL mode and brings its schema up to date; its directory must exist. */
export function openDatabase(path: string): { db: Db; sqlite: Database } {
  const sqlite = new Database(path, { create: true, strict: true });
  // Another process (the CLI beside a running server) may hold the write lock briefly; first, so
  // that switching to WAL waits too for a closing connection's last checkpoint.
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  // Savepoints and statement journals keep a copy of each page they change; on disk that was a
  // write() per page to a temporary file, which cost more than the commit itself (bench/RESULTS.md).
  sqlite.exec("PRAGMA temp_store = MEMORY");
  const db = drizzle(sqlite, { schema });
  applyMigrations(db);
  return { db, sqlite };
}

/** What a statement's named parameters take (the connection is strict: named without their `$`). */
export type Params = Record<string, string | number | bigint | boolean | null | Uint8Array>;

/**
 * Prepares `text` once on the connection, typed by the rows it returns and the parameters it
 * takes. The queue's hot paths run so, as plain SQL: several times faster than the query builder.
 */
export function statement<R = Row, P extends Params = Params>(sqlite: Database, text: string): Statement<R, [P]> {
  return sqlite.prepare<R, [P]>(text);
}
