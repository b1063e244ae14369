import { resolve } from "node:path";
import type { RestoreArgs } from "../cli/backup-args.ts";
import { printCounts } from "../cli/print-counts.ts";
import { announceDatabase } from "./database.ts";
import { loadConfig, usageFailure } from "./exits.ts";

/** `switchboard restore`: a backup back into a SQLite file. */
export async function restoreCommand(argv: string[], env: Record<string, string | undefined>): Promise<void> {
  const [
    { backupSource },
    { restore, RestoreRefused },
    { parseRestoreArgs, RESTORE_USAGE },
    { createSealer },
    { deploymentKey },
    { cryptoRandom },
  ] = await Promise.all([
    import("../backup/backups.ts"),
    import("../backup/restore.ts"),
    import("../cli/backup-args.ts"),
    import("../crypto/sealer.ts"),
    import("../crypto/dev-key.ts"),
    import("../runtime/random.ts"),
  ]);
  if (argv.includes("--help")) return console.log(RESTORE_USAGE);
  let args: RestoreArgs;
  try {
    args = parseRestoreArgs(argv);
  } catch (error) {
    usageFailure("restore", RESTORE_USAGE, error);
  }
  const config = loadConfig(args.to === null ? env : { ...env, DATABASE_URL: args.to });
  const path = backupSource(config);
  if (path === null) {
    console.error(
      "switchboard: restore refused: DATABASE_URL is not a SQLite file; pass --to file:… (PostgreSQL: pg_restore)",
    );
    process.exit(2);
  }
  announceDatabase(resolve(path));
  const encryptionKey = deploymentKey(config, cryptoRandom);
  try {
    const restored = await restore({
      // --latest: the newest at the environment's BACKUP_TO (a relative one beside DATABASE_URL's file, not --to's).
      from: args.from ?? { latestAt: loadConfig(env).backup.to },
      to: path,
      force: args.force,
      encryptionKey,
      sealer: createSealer(encryptionKey, cryptoRandom),
      trustUnsigned: args.trustUnsigned,
      s3: config.backup.s3,
    });
    const { manifest, schemaVersion } = restored;
    const was = manifest.schema_version;
    const migrated = schemaVersion === was ? "" : `, migrated from schema ${was} to ${schemaVersion}`;
    console.log(
      `restored ${manifest.name} (taken ${manifest.at}, schema ${was}${migrated}) from ${restored.from} into ${path}:`,
    );
    printCounts(manifest.counts);
  } catch (error) {
    if (error instanceof RestoreRefused) console.error(`switchboard: restore refused: ${error.message}`);
    else console.error(`switchboard: restore failed, the database was not changed: ${(error as Error).message}`);
    process.exit(error instanceof RestoreRefused ? 2 : 1);
  }
}
