import { Database } from "bun:sqlite";

/** Another server process holds the database's server lock. */
export class DatabaseInUseError extends Error {
  constructor(readonly path: string) {
    super(`${path} is in use by another switchboard server (it holds ${lockPathOf(path)})`);
    this.name = "DatabaseInUseError";
  }
}

const lockPathOf = (databasePath: string) => `${databasePath}-lock`;

/**
 * One server process owns a database file. At start it takes every lease left in the file as a
 * dead run's (recoverLeases), so a second server on the same file would post the first one's
 * in-flight deliveries again, and from then on both would attempt the same due deliveries.
 *
 * The lock is SQLite's own exclusive lock on a small file beside the database, held by a
 * connection that stays open while the server runs. It is a file lock of the operating system,
 * which drops it when the process ends however it ends: a crashed server's restart is never
 * refused, and nothing stale is left to clean up. SQLite also refuses a second connection of the
 * same process. The CLI beside a running server does not take it.
 */
export function takeServerLock(databasePath: string): { release(): void } {
  const lock = holdFileLock(lockPathOf(databasePath));
  if (lock === null) throw new DatabaseInUseError(databasePath);
  return lock;
}

/**
 * SQLite's exclusive lock on the file at `path` (created if need be), held until `release()`; null
 * when another connection holds it, in this process or another. See takeServerLock.
 */
export function holdFileLock(path: string): { release(): void } | null {
  const lock = new Database(path, { create: true });
  try {
    lock.exec("PRAGMA busy_timeout = 0");
    // The lock stays after the transaction ends, until the connection closes.
    lock.exec("PRAGMA locking_mode = EXCLUSIVE");
    lock.exec("PRAGMA journal_mode = OFF");
    lock.exec("BEGIN EXCLUSIVE");
    lock.exec("COMMIT");
  } catch (error) {
    lock.close();
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") return null;
    throw error;
  }
  return { release: () => lock.close() };
}
