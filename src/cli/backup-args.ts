import { parseFlags, UsageError } from "./admin-commands.ts";

export const BACKUP_USAGE = `Usage: switchboard backup [--to DIR | s3://bucket/prefix]
  Takes a consistent snapshot of the running deployment's SQLite database and request log (the
  server goes on serving), verifies it, stores it compressed beside its signed manifest, and prints
  the manifest as JSON. --to defaults to BACKUP_TO (a relative one is beside the database); older
  backups there are deleted as docs/backups.md says. Exit 0 only for a verified backup. In the
  PostgreSQL mode, use PostgreSQL's own tools (pg_dump, PITR).`;

export const RESTORE_USAGE = `Usage: switchboard restore --from PATH|s3://bucket/prefix/NAME | --latest
                           [--to file:./data/switchboard.db] [--force] [--trust-unsigned]
  Restores a backup (its manifest <NAME>.json beside it; --latest: the newest at BACKUP_TO) into a
  SQLite file, DATABASE_URL's by default, and its request log beside it. It first checks the
  manifest's MAC under ENCRYPTION_KEY (--trust-unsigned: restore one without, from a release that
  signed none), the backup's size and sha256, decompresses no more than its manifest states, runs
  SQLite's integrity check, compares the schema with this release's migrations and opens the sealed
  secrets with ENCRYPTION_KEY; it refuses (exit 2, one line) a file a server holds or that holds
  data (--force replaces it). Then it applies this build's newer migrations and prints what it
  restored.`;

export function parseBackupArgs(argv: string[]): { to: string | null } {
  const { values } = parseFlags({ args: argv, options: { to: { type: "string" } } });
  if (values.to === "") throw new UsageError("--to must name a directory or s3://bucket/prefix");
  return { to: values.to ?? null };
}

export interface RestoreArgs {
  /** Null: --latest. */
  from: string | null;
  /** DATABASE_URL of the file to restore into; null: DATABASE_URL's. */
  to: string | null;
  force: boolean;
  trustUnsigned: boolean;
}

export function parseRestoreArgs(argv: string[]): RestoreArgs {
  const { values } = parseFlags({
    args: argv,
    options: {
      from: { type: "string" },
      latest: { type: "boolean" },
      to: { type: "string" },
      force: { type: "boolean" },
      "trust-unsigned": { type: "boolean" },
    },
  });
  if (values.latest && values.from !== undefined) throw new UsageError("give --from or --latest, not both");
  if (!values.latest && !values.from) {
    throw new UsageError(
      "--from must name a backup: a file, or s3://bucket/prefix/NAME (or --latest: the newest at BACKUP_TO)",
    );
  }
  const file = values.to?.startsWith("file:") && values.to !== "file:" && values.to !== "file::memory:";
  if (values.to !== undefined && !file) {
    const example = "like file:./data/switchboard.db (restore PostgreSQL with pg_restore)";
    throw new UsageError(`--to must name the SQLite file to restore into, ${example}`);
  }
  return {
    from: values.latest ? null : (values.from ?? null),
    to: values.to ?? null,
    force: values.force ?? false,
    trustUnsigned: values["trust-unsigned"] ?? false,
  };
}
