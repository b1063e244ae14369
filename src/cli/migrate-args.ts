import { parseFlags, UsageError } from "./admin-commands.ts";

export const MIGRATE_USAGE = `Usage: switchboard migrate --from file:./data/switchboard.db --to postgres://user:pass@host:5432/db
  Moves a SQLite deployment to PostgreSQL (the scale-out mode): every account, user, key, WABA,
  number, endpoint, delivery with its attempts and payload, notification and setting, with
  secrets still sealed under the same ENCRYPTION_KEY. Stop the SQLite server first. The target
  must hold no data; its schema is created. Everything is copied in one transaction: a move that
  fails leaves the target empty, and can be run again. A row PostgreSQL cannot hold is named
  (table, id, column; exit status 2): mend or delete it in the SQLite file first.`;

export interface MigrateArgs {
  sqlitePath: string;
  postgresUrl: string;
}

export function parseMigrateArgs(argv: string[]): MigrateArgs {
  const { values } = parseFlags({ args: argv, options: { from: { type: "string" }, to: { type: "string" } } });
  if (!values.from?.startsWith("file:") || values.from === "file:")
    throw new UsageError("--from must name the SQLite file, like file:./data/switchboard.db");
  if (!values.to || !/^postgres(ql)?:\/\/./.test(values.to)) throw new UsageError("--to must be a postgres:// URL");
  return { sqlitePath: values.from.slice("file:".length), postgresUrl: values.to };
}
