import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema.ts";
import { applyMigrations } from "./migrate.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Opens (creating if needed) the SQLite file in WAL mode and brings its schema up to date; its directory must exist. */
export function openDatabase(path: string): { db: Db; sqlite: Database } {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  // Another process (the CLI beside a running server) may hold the write lock briefly.
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  // Savepoints and statement journals keep a copy of each page they change; on disk that was a
  // write() per page to a temporary file, which cost more than the commit itself (bench/RESULTS.md).
  sqlite.exec("PRAGMA temp_store = MEMORY");
  const db = drizzle(sqlite, { schema });
  applyMigrations(db);
  return { db, sqlite };
}
