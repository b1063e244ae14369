import { Database } from "bun:sqlite";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { BackupLocation } from "../config/backup-config.ts";
import type { Config } from "../config/config.ts";
import { deploymentKey } from "../crypto/dev-key.ts";
import { AppError } from "../errors/catalog.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Random } from "../runtime/random.ts";
import { requestLogPath } from "../store/sqlite/request-log-file.ts";
import { holdFileLock } from "../store/sqlite/server-lock.ts";
import { artifactInChild } from "./child.ts";
import { SymlinkRefused } from "./directory-target.ts";
import { schemaVersionOf } from "./inspect.ts";
import { backupsToDelete } from "./keep.ts";
import { listManifests, parseManifest, type Manifest } from "./manifest.ts";
import { manifestKey, signManifest } from "./manifest-mac.ts";
import { backupOfManifest, isBackupName, manifestName, newBackupName } from "./names.ts";
import { openTarget } from "./open-target.ts";
import { BackupStageError, type ArtifactRequest, type BackupStage, type BackupStep } from "./snapshot.ts";
import type { StoredFile } from "./target.ts";

export interface BackupDeps {
  config: Config;
  clock: Clock;
  random: Random;
  logger: Logger;
  metrics: Metrics;
  /** How to run this program (src/main.ts resolves it), for the backup's own process; from source, main.ts itself. */
  backupCommand?: readonly string[];
  /** Run before each snapshot: the server writes the request log records it holds in memory. */
  beforeSnapshot?: () => Promise<void>;
}

/** The last backup that failed, as GET /admin/backups shows it. */
export interface BackupFailure {
  /** Null when it failed before it had one. */
  name: string | null;
  at: string;
  stage: BackupStage;
  error: string;
}

/** A backup under way: when it began, its name once it has one, and what it is doing. */
interface Begun {
  name: string | null;
  at: number;
  step: BackupStep;
}

const SOURCE_COMMAND = [process.execPath, fileURLToPath(new URL("../main.ts", import.meta.url))];

/** The SQLite file backups are taken of; null for PostgreSQL and a database in memory. */
export function backupSource(config: Config): string | null {
  return config.database.kind === "sqlite" && config.database.path !== ":memory:" ? config.database.path : null;
}

/** The deployment's own files, which a backups' directory never serves whatever their name there. */
function deploymentFiles(databasePath: string): string[] {
  const log = requestLogPath(databasePath);
  return [databasePath, log].flatMap((path) => ["", "-wal", "-shm", "-lock"].map((suffix) => `${path}${suffix}`));
}

/** How many migrations the live database has had, read on a connection of its own. */
function liveSchemaVersion(databasePath: string): number {
  const db = new Database(databasePath, { readonly: true });
  try {
    return schemaVersionOf(db);
  } finally {
    db.close();
  }
}

/**
 * Backups of the deployment's SQLite files (docs/backups.md), one at a time: in this process a
 * second request while one runs is refused (backup_running), and across processes (the CLI beside
 * the server) a lock file beside the database does the same. Each backup is made and verified in a
 * process of its own (child.ts), stored under its name at the target with its signed manifest
 * beside it, and only then are older backups deleted (keep.ts).
 */
export function createBackups(deps: BackupDeps, to: BackupLocation = deps.config.backup.to) {
  const source = backupSource(deps.config);
  if (source === null) throw new AppError("backup_unsupported");
  const databasePath: string = source;
  const { clock, logger, metrics } = deps;
  const target = openTarget(to, deps.config.backup.s3, deploymentFiles(databasePath));
  const key = manifestKey(deploymentKey(deps.config, deps.random));
  const work = {
    databasePath,
    requestLogPath: requestLogPath(databasePath),
    snapshotPath: `${databasePath}-backup-snapshot`,
    requestLogSnapshotPath: `${databasePath}-backup-log-snapshot`,
    artifactPath: `${databasePath}-backup-artifact`,
  };
  // Off the serving thread: unlinking a large file takes the file system a while.
  const removeWork = async () => {
    for (const path of [work.snapshotPath, work.requestLogSnapshotPath, work.artifactPath]) {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) await rm(`${path}${suffix}`, { force: true });
    }
  };
  let running: (Begun & { done: Promise<Manifest> }) | null = null;
  const stopping = new AbortController();
  let lastSuccess: Manifest | null = null;
  let lastFailure: BackupFailure | null = null;

  /** `seconds` is null for a backup this process did not take (its duration is not known here). */
  const succeeded = (manifest: Manifest, seconds: number | null) => {
    lastSuccess = manifest;
    metrics.backupLastSuccess.set(Date.parse(manifest.at) / 1000);
    metrics.backupLastBytes.set(manifest.bytes);
    if (seconds !== null) metrics.backupLastDuration.set(seconds);
  };
  const failed = (name: string | null, stage: BackupStage, error: unknown) => {
    const message = (error as Error).message;
    lastFailure = { name, at: new Date(clock.now()).toISOString(), stage, error: message };
    metrics.backupFailures.inc({ stage });
    const what = stage === "prune" ? "deleting old backups failed; the next run tries again" : "backup failed";
    logger.error(what, { name, stage, error: message, to: target.where });
  };

  /** `task` at the target, a BACKUP_TO that is a symbolic link answered as such (SymlinkRefused). */
  const located = async <T>(task: () => Promise<T>): Promise<T> => {
    try {
      return await task();
    } catch (error) {
      if (error instanceof SymlinkRefused) throw new AppError("backup_location_refused", error.message);
      throw error;
    }
  };
  const manifests = () =>
    listManifests(target, (name) => logger.warn("a backup's manifest cannot be read; it is left out", { name }));

  /** Backups whose manifest is missing were cut off before they counted (a crash between the two puts). */
  async function removeUnfinished(): Promise<string[]> {
    await target.sweep();
    const names = await target.list();
    for (const name of names) if (isBackupName(name) && !names.includes(manifestName(name))) await target.remove(name);
    return target.list();
  }

  async function prune(): Promise<void> {
    for (const old of backupsToDelete(await manifests(), deps.config.backup.keep, clock.now())) {
      // The manifest first: a backup without one no longer counts, and the next run removes its file.
      await target.remove(manifestName(old.name));
      await target.remove(old.name);
      logger.info("old backup deleted", { name: old.name, keep: deps.config.backup.keep });
    }
  }

  async function run(state: Begun, named: (name: string) => void): Promise<Manifest> {
    const started = performance.now();
    let stage: BackupStage = "snapshot";
    /** The backup's file once stored: deleted again when its run fails before the manifest. */
    let placed: string | null = null;
    try {
      await removeWork();
      const schemaVersion = liveSchemaVersion(databasePath);
      const name = newBackupName(state.at, schemaVersion, await removeUnfinished());
      state.name = name;
      named(name);
      // Everything the server was told before the backup began is then in the request log's file.
      await deps.beforeSnapshot?.();
      const request: ArtifactRequest = { ...work, at: Math.floor(state.at / 1000) };
      const artifact = await artifactInChild(deps.backupCommand ?? SOURCE_COMMAND, request, stopping.signal, (step) => {
        state.step = step;
      });
      if (artifact.schemaVersion !== schemaVersion) {
        throw new BackupStageError("verify", "the database was migrated while the backup was taken; take another");
      }
      stage = "upload";
      state.step = "upload";
      await target.put(name, work.artifactPath);
      placed = name;
      const stored = await target.open(name);
      if (stored === null) throw new BackupStageError("upload", `${name} is not there after its upload`);
      if (stored.size !== artifact.bytes) {
        throw new BackupStageError("upload", `the stored copy is ${stored.size} bytes, not ${artifact.bytes}`);
      }
      const manifest = signManifest(
        {
          name,
          at: new Date(state.at).toISOString(),
          bytes: artifact.bytes,
          sha256: artifact.sha256,
          uncompressed_bytes: artifact.uncompressedBytes,
          schema_version: artifact.schemaVersion,
          request_log_version: artifact.requestLogVersion,
          counts: artifact.counts,
        },
        key,
      );
      // Written last: a backup counts once its manifest is there.
      await target.putText(manifestName(name), JSON.stringify(manifest, null, 2));
      placed = null;
      const seconds = (performance.now() - started) / 1000;
      succeeded(manifest, seconds);
      logger.info("backup taken", {
        name,
        bytes: manifest.bytes,
        seconds: Number(seconds.toFixed(3)),
        to: target.where,
      });
      try {
        await prune();
      } catch (error) {
        // The new backup counts; the old ones are deleted at the next run.
        failed(name, "prune", error);
      }
      return manifest;
    } catch (error) {
      const failure = error instanceof BackupStageError ? error : new BackupStageError(stage, (error as Error).message);
      failed(state.name, failure.stage, failure);
      // If this fails too, the next run removes it: without a manifest it never counted.
      if (placed !== null) await target.remove(placed).catch(() => undefined);
      throw new AppError("backup_failed", `The backup failed (${failure.stage}): ${failure.message}`);
    } finally {
      await removeWork();
    }
  }

  /**
   * Starts a backup now; resolves with its name once it has one, and `done`, which resolves with its
   * manifest once it is verified and stored. Refused (backup_running) while one runs.
   */
  function start(): Promise<{ name: string; done: Promise<Manifest> }> {
    if (running) throw new AppError("backup_running");
    const lock = holdFileLock(`${databasePath}-backup-lock`);
    const elsewhere = "Another process is taking a backup of this database; try again when it is done.";
    if (lock === null) throw new AppError("backup_running", elsewhere);
    const naming = Promise.withResolvers<string>();
    const state: Begun = { name: null, at: clock.now(), step: "snapshot" };
    const done = run(state, naming.resolve).finally(() => {
      lock.release();
      running = null;
    });
    running = Object.assign(state, { done });
    // A run that fails before it has a name fails its start with the same error.
    done.catch(naming.reject);
    return naming.promise.then((name) => ({ name, done }));
  }

  return {
    target,
    start,
    /** Takes a backup now; resolves with its manifest once it is verified and stored. */
    async create(): Promise<Manifest> {
      return (await start()).done;
    },
    /** Every verified backup at the target, newest first. */
    list: () => located(manifests),
    /** A backup's file, or its manifest (`<name>.json`); null for anything else. */
    async open(name: string): Promise<StoredFile | null> {
      if (!isBackupName(name) && backupOfManifest(name) === null) return null;
      return located(() => target.open(name));
    },
    /** Where backup `name` is: taken (its manifest), still running, failed, or unknown here (null). */
    async status(
      name: string,
    ): Promise<
      | { state: "taken"; manifest: Manifest }
      | { state: "running"; at: string; step: BackupStep }
      | { state: "failed"; failure: BackupFailure }
      | null
    > {
      if (!isBackupName(name)) return null;
      if (running?.name === name) {
        return { state: "running", at: new Date(running.at).toISOString(), step: running.step };
      }
      const text = await located(() => target.readText(manifestName(name)));
      const manifest = text === null ? null : parseManifest(text);
      if (manifest?.name === name) return { state: "taken", manifest };
      if (lastFailure?.name === name) return { state: "failed", failure: lastFailure };
      return null;
    },
    /** The backup under way: its name (null until it has one), when it began and its step; null when none runs here. */
    current: (): { name: string | null; at: string; step: BackupStep } | null =>
      running && { name: running.name, at: new Date(running.at).toISOString(), step: running.step },
    lastFailure: (): BackupFailure | null => lastFailure,
    lastSuccess: (): Manifest | null => lastSuccess,
    /** Reads the newest backup kept at the target, so that a restarted server knows how old it is. */
    async readLastSuccess(): Promise<void> {
      const newest = (await manifests())[0];
      if (newest && !lastSuccess) succeeded(newest, null);
    },
    /** Ends a backup in progress (the server is stopping) and waits until its files are cleaned up. */
    async stop(): Promise<void> {
      stopping.abort();
      await running?.done.catch(() => undefined);
    },
  };
}

export type Backups = ReturnType<typeof createBackups>;

/** Backups of this deployment, or null when its database is not a SQLite file (they are then unsupported). */
export function backupsOf(deps: BackupDeps): Backups | null {
  return backupSource(deps.config) === null ? null : createBackups(deps);
}
