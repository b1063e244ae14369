import { parseFlags, UsageError } from "./admin-commands.ts";

export const BACKUP_USAGE = `Usage: switchboard backup [--to ./data/backups | s3://bucket/prefix]
  Takes a consistent snapshot of the running deployment's SQLite database (the server goes on
  serving), verifies it, stores it compressed beside its manifest, and prints the manifest as JSON.
  --to defaults to BACKUP_TO; the newest BACKUP_KEEP backups there are kept. Exit 0 only for a
  verified backup. In the PostgreSQL mode, use PostgreSQL's own tools (pg_dump, PITR).`;

export const RESTORE_USAGE = `Usage: switchboard restore --from PATH|s3://bucket/prefix/NAME
                           [--to file:./data/switchboard.db] [--force]
  Restores a backup (its manifest <NAME>.json beside it) into a SQLite file, DATABASE_URL's by
  default. It first checks the backup's size and sha256, decompresses it, runs SQLite's integrity
  check and opens its sealed secrets with ENCRYPTION_KEY; it refuses (exit 2, one line) a file a
  server holds or that holds data (--force replaces it). Then it applies this build's newer
  migrations and prints what it restored.`;

export function parseBackupArgs(argv: string[]): { to: string | null } {
  const { values } = parseFlags({ args: argv, options: { to: { type: "string" } } });
  if (values.to === "") throw new UsageError("--to must name a directory or s3://bucket/prefix");
  return { to: values.to ?? null };
}

export interface RestoreArgs {
  from: string;
  /** DATABASE_URL of the file to restore into; null: DATABASE_URL's. */
  to: string | null;
  force: boolean;
}

export function parseRestoreArgs(argv: string[]): RestoreArgs {
  const { values } = parseFlags({
    args: argv,
    options: { from: { type: "string" }, to: { type: "string" }, force: { type: "boolean" } },
  });
  if (!values.from) throw new UsageError("--from must name a backup: a file, or s3://bucket/prefix/NAME");
  const file = values.to?.startsWith("file:") && values.to !== "file:" && values.to !== "file::memory:";
  if (values.to !== undefined && !file) {
    const example = "like file:./data/switchboard.db (restore PostgreSQL with pg_restore)";
    throw new UsageError(`--to must name the SQLite file to restore into, ${example}`);
  }
  return { from: values.from, to: values.to ?? null, force: values.force ?? false };
}
