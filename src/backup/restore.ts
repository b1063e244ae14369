import { Database } from "bun:sqlite";
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { embeddedMigrations } from "../../db/migrations.gen.ts";
import { parseBackupLocation, requireS3Keys, type S3Settings } from "../config/backup-config.ts";
import { ConfigError } from "../config/config.ts";
import { SealError, type Sealer } from "../crypto/sealer.ts";
import { openDatabase } from "../store/sqlite/open.ts";
import { DatabaseInUseError, takeServerLock } from "../store/sqlite/server-lock.ts";
import { decompressFile, fileDigest, PRIVATE_FILE, syncToDisk } from "./codec.ts";
import {
  countRows,
  DamagedDatabaseError,
  type DatabaseFacts,
  inspectDatabase,
  openSealedSecrets,
  schemaVersionOf,
} from "./inspect.ts";
import { parseManifest, type Manifest } from "./manifest.ts";
import { manifestName } from "./names.ts";
import { openTarget } from "./open-target.ts";
import type { BackupTarget } from "./target.ts";

/** A restore that will not go ahead; the message says why in one line, and nothing was written. */
export class RestoreRefused extends Error {}

export interface RestoreRequest {
  /** A backup's path, or s3://bucket/prefix/NAME; its manifest is beside it (<NAME>.json). */
  from: string;
  /** The SQLite file to restore into. */
  to: string;
  /** Replace a database that holds data. */
  force: boolean;
  /** ENCRYPTION_KEY's sealer: it must open the backup's sealed secrets. */
  sealer: Sealer;
  s3: S3Settings;
}

export interface Restored {
  manifest: Manifest;
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

/** The backup's manifest and its file, fetched to `download` when it is not a local file. */
async function fetchBackup(request: RestoreRequest, download: string): Promise<{ manifest: Manifest; local: string }> {
  const s3 = request.from.startsWith("s3://");
  const name = s3 ? request.from.slice(request.from.lastIndexOf("/") + 1) : basename(request.from);
  const place = s3 ? request.from.slice(0, request.from.lastIndexOf("/")) : dirname(request.from);
  if (name === "") throw new RestoreRefused("--from must name a backup's file, not a directory or a prefix");
  let target: BackupTarget;
  try {
    const location = parseBackupLocation("--from", place);
    if (location.kind === "s3") requireS3Keys(request.s3);
    target = openTarget(location, request.s3);
  } catch (error) {
    if (error instanceof ConfigError) throw new RestoreRefused(error.message);
    throw error;
  }
  const text = await target.readText(manifestName(name));
  if (text === null) {
    if (s3 && (await target.open(name)) === null) throw new RestoreRefused(`no backup at ${request.from}`);
    throw new RestoreRefused(
      `no manifest ${manifestName(name)} beside ${request.from}: its sha256 cannot be checked (download both)`,
    );
  }
  const manifest = parseManifest(text);
  if (manifest === null) throw new RestoreRefused(`${manifestName(name)} is not a backup manifest`);
  if (!s3) return { manifest, local: request.from };
  const file = await target.open(name);
  if (file === null) throw new RestoreRefused(`${request.from} does not exist`);
  const copy = createWriteStream(download, { flags: "wx", mode: PRIVATE_FILE });
  await pipeline(Readable.fromWeb(file.stream() as never), copy);
  return { manifest, local: download };
}

/** The checks of docs/operations.md#backups, in order; each refusal says what is wrong with the backup. */
async function checkBackup(local: string, manifest: Manifest, decompressed: string, sealer: Sealer): Promise<void> {
  const stored = await fileDigest(local);
  if (stored.bytes !== manifest.bytes) {
    const sizes = `${stored.bytes} bytes where its manifest says ${manifest.bytes}`;
    throw new RestoreRefused(`the backup is ${sizes}: it is truncated or damaged`);
  }
  if (stored.sha256 !== manifest.sha256) {
    throw new RestoreRefused("the backup's sha256 does not match its manifest: the file is damaged");
  }
  try {
    await decompressFile(local, decompressed);
  } catch (error) {
    throw new RestoreRefused(`the backup cannot be decompressed: ${(error as Error).message}`);
  }
  let facts: DatabaseFacts;
  try {
    facts = inspectDatabase(decompressed);
  } catch (error) {
    if (error instanceof DamagedDatabaseError) throw new RestoreRefused(`the backup's database ${error.message}`);
    throw error;
  }
  if (facts.schemaVersion > embeddedMigrations.length) {
    const versions = `schema ${facts.schemaVersion}; this one knows ${embeddedMigrations.length}`;
    throw new RestoreRefused(`the backup was taken by a newer Switchboard (${versions}): restore it with that version`);
  }
  try {
    openSealedSecrets(decompressed, sealer);
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    const advice = "set the ENCRYPTION_KEY of the server the backup was taken from";
    throw new RestoreRefused(`ENCRYPTION_KEY does not open the backup's sealed secrets (${error.message}): ${advice}`);
  }
}

/**
 * `switchboard restore` (docs/operations.md#backups). Refuses, before writing anything, a target a server holds
 * (its lock) or that holds data (unless `force`), and a backup whose size or sha256 differs from
 * its manifest, that does not decompress, fails SQLite's integrity check, comes from a newer
 * build, or whose sealed secrets ENCRYPTION_KEY does not open. Then brings the restored copy up to
 * this build's migrations and renames it over the target, whose old write-ahead log is removed
 * first (its pages belong to the old file).
 */
export async function restore(request: RestoreRequest): Promise<Restored> {
  // The backup itself first, before anything is made: a missing file is said as such, not as a missing manifest.
  if (!request.from.startsWith("s3://") && !existsSync(request.from))
    throw new RestoreRefused(`no backup at ${resolve(request.from)}: the file does not exist`);
  const target = request.to;
  mkdirSync(dirname(target), { recursive: true });
  let lock: ReturnType<typeof takeServerLock>;
  try {
    lock = takeServerLock(target);
  } catch (error) {
    if (error instanceof DatabaseInUseError) throw new RestoreRefused(`${error.message}; stop it first`);
    throw error;
  }
  const download = `${target}-restore-download`;
  const decompressed = `${target}-restore`;
  const scratch = [download, decompressed, `${decompressed}-wal`, `${decompressed}-shm`];
  const removeScratch = () => {
    for (const path of scratch) rmSync(path, { force: true });
  };
  try {
    removeScratch();
    const held = request.force ? null : rowsIn(target);
    if (held !== null) {
      const some = Object.entries(held)
        .slice(0, 3)
        .map(([table, rows]) => `${table}: ${rows}`)
        .join(", ");
      const advice = "restore into a new file, or pass --force to replace it";
      throw new RestoreRefused(`${target} already holds data (${some}); ${advice}`);
    }
    const { manifest, local } = await fetchBackup(request, download);
    await checkBackup(local, manifest, decompressed, request.sealer);
    // Applies the migrations this build added since the backup; then one file again, without a WAL.
    const { sqlite } = openDatabase(decompressed);
    const schemaVersion = schemaVersionOf(sqlite);
    sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    sqlite.close();
    for (const beside of [`${target}-wal`, `${target}-shm`]) rmSync(beside, { force: true });
    renameSync(decompressed, target);
    syncToDisk(dirname(target));
    return { manifest, schemaVersion };
  } finally {
    removeScratch();
    lock.release();
  }
}
