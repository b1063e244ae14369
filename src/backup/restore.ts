import { Database } from "bun:sqlite";
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type BackupLocation, parseBackupLocation, requireS3Keys, type S3Settings } from "../config/backup-config.ts";
import { ConfigError } from "../config/config.ts";
import type { Sealer } from "../crypto/sealer.ts";
import { openDatabase } from "../store/sqlite/open.ts";
import { openRequestLogFile, requestLogPath } from "../store/sqlite/request-log-file.ts";
import { DatabaseInUseError, takeServerLock } from "../store/sqlite/server-lock.ts";
import { PRIVATE_FILE, syncToDisk } from "./codec.ts";
import { SymlinkRefused } from "./directory-target.ts";
import { countRows, schemaVersionOf } from "./inspect.ts";
import { listManifests, parseManifest, type Manifest } from "./manifest.ts";
import { manifestKey } from "./manifest-mac.ts";
import { manifestName } from "./names.ts";
import { openTarget } from "./open-target.ts";
import type { BackupTarget } from "./target.ts";
import { checkDigest, checkMac, checkUnpacked, RestoreRefused, type Scratch, unpack } from "./unpack.ts";

export { RestoreRefused } from "./unpack.ts";

export interface RestoreRequest {
  /** A backup's path, or s3://bucket/prefix/NAME (its manifest is beside it, <NAME>.json); or the newest at `latestAt`. */
  from: string | { latestAt: BackupLocation };
  /** The SQLite file to restore into (the request log's file goes beside it). */
  to: string;
  /** Replace a database that holds data. */
  force: boolean;
  /** ENCRYPTION_KEY: its MAC key checks the manifest, its sealer must open the backup's sealed secrets. */
  encryptionKey: Uint8Array;
  sealer: Sealer;
  /** Restore a backup whose manifest has no MAC (the release before signed none). */
  trustUnsigned: boolean;
  s3: S3Settings;
}

export interface Restored {
  manifest: Manifest;
  /** Where the backup was read from. */
  from: string;
  /** The schema version after the migrations this build added were applied. */
  schemaVersion: number;
}

/** Rows in the file's tables, or null when it has none (no file, an empty one, only empty tables). */
function rowsIn(path: string): Record<string, number> | null {
  if (!existsSync(path) || statSync(path).size === 0) return null;
  const unreadable = (error: unknown) =>
    new RestoreRefused(
      `${path} cannot be read as a SQLite database (${(error as Error).message}); pass --force to replace it`,
    );
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
  } catch (error) {
    throw unreadable(error);
  }
  try {
    const held = Object.entries(countRows(db)).filter(([, rows]) => rows > 0);
    return held.length === 0 ? null : Object.fromEntries(held);
  } catch (error) {
    throw unreadable(error);
  } finally {
    db.close();
  }
}

/** The target at a location, with its errors as refusals. */
function targetAt(variable: string, place: string | BackupLocation, s3: S3Settings): BackupTarget {
  try {
    const location = typeof place === "string" ? parseBackupLocation(variable, place) : place;
    if (location.kind === "s3") requireS3Keys(s3);
    return openTarget(location, s3);
  } catch (error) {
    if (error instanceof ConfigError) throw new RestoreRefused(error.message);
    throw error;
  }
}

/** The backup's name and where it is: `--from`'s, or the newest verified one at BACKUP_TO. */
async function locate(request: RestoreRequest): Promise<{ target: BackupTarget; name: string; from: string }> {
  const { from } = request;
  if (typeof from !== "string") {
    const target = targetAt("BACKUP_TO", from.latestAt, request.s3);
    const newest = (await listManifests(target, () => undefined))[0];
    if (newest === undefined) throw new RestoreRefused(`no backup at ${target.where} (BACKUP_TO)`);
    const where = target.where.startsWith("s3://") ? `${target.where}/${newest.name}` : join(target.where, newest.name);
    return { target, name: newest.name, from: where };
  }
  const s3 = from.startsWith("s3://");
  const name = s3 ? from.slice(from.lastIndexOf("/") + 1) : basename(from);
  if (name === "") throw new RestoreRefused("--from must name a backup's file, not a directory or a prefix");
  return {
    target: targetAt("--from", s3 ? from.slice(0, from.lastIndexOf("/")) : dirname(from), request.s3),
    name,
    from,
  };
}

/**
 * The backup's manifest, checked (its MAC first: nothing else of an unauthenticated backup is read),
 * and its file, fetched to `download` when it is not a local file.
 */
async function fetchBackup(
  request: RestoreRequest,
  download: string,
): Promise<{ manifest: Manifest; local: string; from: string }> {
  const { target, name, from } = await locate(request);
  const text = await target.readText(manifestName(name));
  if (text === null) {
    // A missing backup is said as such, not as a missing manifest.
    if ((await target.open(name)) === null) throw new RestoreRefused(`no backup at ${from}`);
    throw new RestoreRefused(
      `no manifest ${manifestName(name)} beside ${from}: its sha256 cannot be checked (download both)`,
    );
  }
  const manifest = parseManifest(text);
  if (manifest === null || manifest.name !== name) {
    throw new RestoreRefused(`${manifestName(name)} is not the manifest of a backup named ${name}`);
  }
  checkMac(manifest, manifestKey(request.encryptionKey), request.trustUnsigned);
  const file = await target.open(name);
  if (file === null) throw new RestoreRefused(`${from} does not exist`);
  if (!target.where.startsWith("s3://")) return { manifest, local: join(target.where, name), from };
  const copy = createWriteStream(download, { flags: "wx", mode: PRIVATE_FILE });
  await pipeline(Readable.fromWeb(file.stream() as never), copy);
  return { manifest, local: download, from };
}

/** Refuses a target whose database or request log holds rows (unless `force`). */
function checkTargetEmpty(target: string, force: boolean): void {
  if (force) return;
  const held = { ...rowsIn(requestLogPath(target)), ...rowsIn(target) };
  if (Object.keys(held).length === 0) return;
  const some = Object.entries(held)
    .slice(0, 3)
    .map(([table, rows]) => `${table}: ${rows}`)
    .join(", ");
  throw new RestoreRefused(
    `${target} already holds data (${some}); restore into a new file, or pass --force to replace it`,
  );
}

/**
 * `switchboard restore` (docs/backups.md#restore). Refuses, before writing anything, a target a
 * server holds (its lock) or that holds data (unless `force`), and a backup whose manifest's MAC
 * does not verify (or is missing, unless `trustUnsigned`), whose size or sha256 differs from its
 * manifest, that decompresses past the size its manifest states, whose archive, integrity or schema
 * is not this release's, that comes from a newer build, or whose sealed secrets ENCRYPTION_KEY does
 * not open. Then brings both files up to this build's schema and renames them over the target's
 * (the request log's first), whose old write-ahead logs are removed first.
 */
export async function restore(request: RestoreRequest): Promise<Restored> {
  const { from } = request;
  // A local backup that is not there is said as such, before anything is made at the target.
  if (typeof from === "string" && !from.startsWith("s3://") && !existsSync(from))
    throw new RestoreRefused(`no backup at ${resolve(from)}: the file does not exist`);
  const target = request.to;
  const logTarget = requestLogPath(target);
  mkdirSync(dirname(target), { recursive: true });
  let lock: ReturnType<typeof takeServerLock>;
  try {
    lock = takeServerLock(target);
  } catch (error) {
    if (error instanceof DatabaseInUseError) throw new RestoreRefused(`${error.message}; stop it first`);
    throw error;
  }
  const download = `${target}-restore-download`;
  const scratch: Scratch = { database: `${target}-restore`, requestLog: `${target}-restore-log` };
  const removeScratch = () => {
    for (const path of [download, scratch.database, scratch.requestLog]) {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${path}${suffix}`, { force: true });
    }
  };
  try {
    removeScratch();
    checkTargetEmpty(target, request.force);
    const { manifest, local, from } = await fetchBackup(request, download).catch((error) => {
      throw error instanceof SymlinkRefused ? new RestoreRefused(error.message) : error;
    });
    await checkDigest(local, manifest);
    await unpack(local, manifest, scratch);
    checkUnpacked(scratch, request.sealer);
    // Applies the migrations this build added since the backup; then each one file again, without a WAL.
    const { sqlite } = openDatabase(scratch.database);
    const schemaVersion = schemaVersionOf(sqlite);
    for (const db of [sqlite, openRequestLogFile(scratch.requestLog)]) {
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.close();
    }
    for (const live of [target, logTarget]) {
      for (const beside of [`${live}-wal`, `${live}-shm`]) rmSync(beside, { force: true });
    }
    renameSync(scratch.requestLog, logTarget);
    renameSync(scratch.database, target);
    await syncToDisk(dirname(target));
    return { manifest, from, schemaVersion };
  } finally {
    removeScratch();
    lock.release();
  }
}
