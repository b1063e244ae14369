import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Config } from "../config/config.ts";
import { postgresName } from "../config/readers.ts";

/**
 * Which database a command works on, said before it does anything (docs/operations.md#command-line): only `serve`,
 * `restore` and `migrate --to` may create one, so every other command refuses a SQLite file that
 * is not there rather than make a new, empty one where the operator did not mean to.
 */

/** Where a SQLite file or PostgreSQL database is, for messages: the file's full path, never a URL's password. */
export function databaseName(config: Config): string {
  if (config.database.kind === "postgres") return postgresName(config.database.url);
  return config.database.path === ":memory:" ? ":memory:" : resolve(config.database.path);
}

/**
 * Exits 2 with one line naming the path looked for when `path` (a SQLite file) does not exist.
 * `flag`: where the path came from, for the line (`DATABASE_URL`, `--from`).
 */
export function requireSqliteFile(command: string, path: string, flag = "DATABASE_URL"): void {
  if (path === ":memory:" || existsSync(path)) return;
  console.error(
    `switchboard: ${command}: no database at ${resolve(path)} (${flag}); nothing was created. Set DATABASE_URL to the server's file (switchboard serve creates one)`,
  );
  process.exit(2);
}

/** requireSqliteFile for the configured database (PostgreSQL: its server says whether it exists). */
export function requireDatabase(command: string, config: Config): void {
  if (config.database.kind === "sqlite") requireSqliteFile(command, config.database.path);
}

/** On a terminal, the command's first line names the database it uses (standard error: standard output stays its JSON). */
export function announceDatabase(
  name: string,
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
) {
  if (stream.isTTY) stream.write(`switchboard: database ${name}\n`);
}
