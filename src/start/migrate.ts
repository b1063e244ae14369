import { resolve } from "node:path";
import type { MigrateArgs } from "../cli/migrate-args.ts";
import { printCounts } from "../cli/print-counts.ts";
import { DatabaseInUseError } from "../store/sqlite/server-lock.ts";
import { postgresName } from "../config/readers.ts";
import { announceDatabase, requireSqliteFile } from "./database.ts";

/** `switchboard migrate --from --to`: move a SQLite deployment to PostgreSQL. */
export async function migrate(argv: string[]): Promise<void> {
  const [
    { UsageError },
    { MIGRATE_USAGE, parseMigrateArgs },
    { progressBar },
    { moveToPostgres, TargetNotEmptyError },
    { UncopyableRowError },
  ] = await Promise.all([
    import("../cli/admin-commands.ts"),
    import("../cli/migrate-args.ts"),
    import("../cli/progress-bar.ts"),
    import("../move/move.ts"),
    import("../move/rows.ts"),
  ]);
  if (argv.includes("--help")) {
    console.log(MIGRATE_USAGE);
    return;
  }
  let args: MigrateArgs;
  try {
    args = parseMigrateArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`switchboard: ${error.message}\n\n${MIGRATE_USAGE}`);
    process.exit(2);
  }
  requireSqliteFile("migrate", args.sqlitePath, "--from");
  announceDatabase(`${resolve(args.sqlitePath)} → ${postgresName(args.postgresUrl)}`);
  const bar = progressBar((text) => process.stderr.write(text), process.stderr.isTTY === true);
  try {
    const counts = await moveToPostgres(args.sqlitePath, args.postgresUrl, bar);
    bar.finish();
    console.log("copied:");
    printCounts(counts);
  } catch (error) {
    bar.finish();
    if (error instanceof DatabaseInUseError) console.error(`switchboard: migrate: ${error.message}; stop it first`);
    else if (error instanceof TargetNotEmptyError) console.error(`switchboard: migrate: ${error.message}`);
    else if (error instanceof UncopyableRowError) {
      console.error(
        `switchboard: migrate: cannot copy ${error.message}; mend or delete that row in the SQLite file and run again (nothing was copied)`,
      );
      process.exit(2);
    } else console.error(`switchboard: migrate failed, nothing was copied: ${(error as Error).message}`);
    process.exit(1);
  }
}
