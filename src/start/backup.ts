import { resolve } from "node:path";
import { AppError } from "../errors/catalog.ts";
import { announceDatabase, requireSqliteFile } from "./database.ts";
import { loadConfig, usageFailure } from "./exits.ts";
import { stderrLogger, type Workers } from "./open-deps.ts";

/** `switchboard backup`: a verified backup of the SQLite file, while it serves. */
export async function backup(argv: string[], env: Record<string, string | undefined>, workers: Workers): Promise<void> {
  const [
    { backupSource, createBackups },
    { backupEntry },
    { BY_CLI },
    { recordInFile },
    { BACKUP_USAGE, parseBackupArgs },
    { parseBackupLocation, requireS3Keys, resolveLocation },
    { createMetrics },
    { systemClock },
    { cryptoRandom },
  ] = await Promise.all([
    import("../backup/backups.ts"),
    import("../backup/audit.ts"),
    import("../audit/entry.ts"),
    import("../store/sqlite/audit.ts"),
    import("../cli/backup-args.ts"),
    import("../config/backup-config.ts"),
    import("../observability/metrics.ts"),
    import("../runtime/clock.ts"),
    import("../runtime/random.ts"),
  ]);
  if (argv.includes("--help")) return console.log(BACKUP_USAGE);
  const config = loadConfig(env);
  const source = backupSource(config);
  if (source === null) {
    const how = "pg_dump for a snapshot, WAL archiving for point-in-time recovery (PITR)";
    console.error(
      `switchboard: backup: DATABASE_URL is not a SQLite file; back up PostgreSQL with its own tools: ${how}`,
    );
    process.exit(2);
  }
  requireSqliteFile("backup", source);
  announceDatabase(resolve(source));
  let to = config.backup.to;
  try {
    const args = parseBackupArgs(argv);
    // A directory on the command line is the shell's: taken from where the command runs.
    if (args.to !== null) to = resolveLocation(parseBackupLocation("--to", args.to), process.cwd());
    if (to.kind === "s3") requireS3Keys(config.backup.s3);
  } catch (error) {
    usageFailure("backup", BACKUP_USAGE, error);
  }
  const deps = {
    config,
    clock: systemClock,
    random: cryptoRandom,
    logger: stderrLogger(config),
    metrics: createMetrics(),
    backupCommand: workers.self,
  };
  const backups = createBackups(deps, to);
  try {
    const manifest = await backups.create();
    // Who took it, in the audit log of the file it is a backup of (src/backup/audit.ts). The backup
    // stands whatever happens to its entry: a failure to write it is said, not the command's failure.
    try {
      const entry = backupEntry({ clock: systemClock, random: cryptoRandom }, manifest, BY_CLI);
      if (!recordInFile(source, entry))
        deps.logger.warn("the backup is not in the audit log: the database predates it (a server's start migrates it)");
    } catch (error) {
      deps.logger.error("the backup's audit entry could not be written", { error: (error as Error).message });
    }
    console.log(JSON.stringify(manifest, null, 2));
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    console.error(`switchboard: backup: ${error.message}`);
    process.exit(1);
  }
}
