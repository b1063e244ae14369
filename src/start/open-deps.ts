import { ConfigError, type Config } from "../config/config.ts";
import { SealError } from "../crypto/sealer.ts";
import type { Deps } from "../deps.ts";
import { createLogger, type Logger } from "../observability/logger.ts";
import { DatabaseRefusedError } from "../store/errors.ts";
import { DatabaseInUseError } from "../store/sqlite/server-lock.ts";
import { systemDeps, type ServerOptions } from "../system-deps.ts";
import { databaseName } from "./database.ts";
import { configurationError, startFailure } from "./exits.ts";

/** The threads' entries and this program's command, resolved by src/main.ts (see WORKERS there). */
export interface Workers extends ServerOptions {
  /** The backup's snapshot thread's entry, in the backup's own process. */
  snapshotWorker: string;
  /** How to run this program again: the backup's own process (src/backup/child.ts). */
  self: readonly string[];
}

/** Errors that mean the database file cannot be made or opened where DATABASE_URL points. */
const CANNOT_OPEN =
  /^(ENOENT|EACCES|EPERM|EROFS|ENOTDIR|EISDIR|EEXIST|SQLITE_CANTOPEN|SQLITE_NOTADB|SQLITE_READONLY|SQLITE_PERM)/;

/** The real world's parts for a command; `server`, for the server's background threads. */
export async function openDeps(
  config: Config,
  logger: Logger,
  backupCommand: readonly string[],
  server?: ServerOptions,
): Promise<Deps> {
  try {
    return { ...(await systemDeps(config, logger, server)), backupCommand };
  } catch (error) {
    if (error instanceof SealError) configurationError(`ENCRYPTION_KEY: ${error.message}`);
    if (error instanceof DatabaseInUseError) configurationError(`DATABASE_URL: ${error.message}`);
    if (error instanceof ConfigError) configurationError(error.message);
    if (error instanceof DatabaseRefusedError) startFailure(`DATABASE_URL: ${error.message}`);
    const { code, message } = error as { code?: unknown; message?: string };
    if (typeof code === "string" && CANNOT_OPEN.test(code))
      configurationError(`DATABASE_URL: cannot open ${databaseName(config)}: ${message}`);
    throw error;
  }
}

/** Standard output carries a command's JSON or report; log lines go to standard error. */
export const stderrLogger = (config: Config) =>
  createLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`));
