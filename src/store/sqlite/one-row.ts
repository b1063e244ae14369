import type { Database } from "bun:sqlite";

/** The one row a statement always answers (a PRAGMA's value, a COUNT); its absence is an error that says so. */
export function oneRow<T>(db: Database, sql: string): T {
  const row = db.query<T, []>(sql).get();
  if (row === null) throw new Error(`SQLite answered no row to ${sql}`);
  return row;
}
