import { rmSync } from "node:fs";
import type { BackupLocation } from "../config/backup-config.ts";
import type { Config } from "../config/config.ts";
import { AppError } from "../errors/catalog.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Clock } from "../runtime/clock.ts";
import { holdFileLock } from "../store/sqlite/server-lock.ts";
import { newestFirst, parseManifest, type Manifest } from "./manifest.ts";
import { backupOfManifest, isBackupName, manifestName, newBackupName } from "./names.ts";
import { BackupStageError, type BackupStage } from "./snapshot.ts";
import { openTarget } from "./open-target.ts";
import type { StoredFile } from "./target.ts";
import { artifactOnThread } from "./thread.ts";

export interface BackupDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** snapshot-worker.ts's URL; main.ts resolves it (see artifactOnThread). From source, the one beside this file. */
  snapshotWorkerUrl?: string;
}

/** The last backup that failed, as GET /admin/backups shows it. */
export interface BackupFailure {
  at: string;
  stage: BackupStage;
  error: string;
}

const SOURCE_WORKER = new URL("./snapshot-worker.ts", import.meta.url).href;

/** The SQLite file backups are taken of; null for PostgreSQL and a database in memory. */
export function backupSource(config: Config): string | null {
  return config.database.kind === "sqlite" && config.database.path !== ":memory:" ? config.database.path : null;
}

/**
 * Backups of the deployment's SQLite file (docs/operations.md#backups), one at a time: in this process a second
 * request while one runs is refused (backup_running), and across processes (the CLI beside the
 * server) a lock file beside the database does the same. Each backup is made and verified on a
 * thread of its own, stored under its name at the target with its manifest beside it, and only
 * then are the backups past the newest BACKUP_KEEP deleted.
 */
export function createBackups(deps: BackupDeps, to: BackupLocation = deps.config.backup.to) {
  const databasePath = backupSource(deps.config);
  if (databasePath === null) throw new AppError("backup_unsupported");
  const { clock, logger, metrics } = deps;
  const target = openTarget(to, deps.config.backup.s3);
  const work = {
    databasePath,
    snapshotPath: `${databasePath}-backup-snapshot`,
    artifactPath: `${databasePath}-backup-artifact`,
  };
  const removeWork = () => {
    for (const path of [work.snapshotPath, work.artifactPath]) rmSync(path, { force: true });
  };
  let running: Promise<Manifest> | null = null;
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
  const failed = (stage: BackupStage, error: unknown) => {
    const message = (error as Error).message;
    lastFailure = { at: new Date(clock.now()).toISOString(), stage, error: message };
    metrics.backupFailures.inc({ stage });
    const what =
      stage === "prune" ? "deleting backups past BACKUP_KEEP failed; the next run tries again" : "backup failed";
    logger.error(what, { stage, error: message, to: target.where });
  };

  async function manifests(names?: string[]): Promise<Manifest[]> {
    const found: Manifest[] = [];
    for (const name of names ?? (await target.list())) {
      const backup = backupOfManifest(name);
      if (backup === null) continue;
      const text = await target.readText(name);
      const manifest = text === null ? null : parseManifest(text);
      if (manifest?.name === backup) found.push(manifest);
      else if (text !== null) logger.warn("a backup's manifest cannot be read; it is left out", { name });
    }
    return found.sort(newestFirst);
  }

  /** Backups whose manifest is missing were cut off before they counted (a crash between the two puts). */
  async function removeUnfinished(): Promise<string[]> {
    await target.sweep();
    const names = await target.list();
    for (const name of names) if (isBackupName(name) && !names.includes(manifestName(name))) await target.remove(name);
    return target.list();
  }

  async function prune(): Promise<void> {
    for (const old of (await manifests()).slice(deps.config.backup.keep)) {
      // The manifest first: a backup without one no longer counts, and the next run removes its file.
      await target.remove(manifestName(old.name));
      await target.remove(old.name);
      logger.info("old backup deleted", { name: old.name, keep: deps.config.backup.keep });
    }
  }

  async function run(): Promise<Manifest> {
    const at = clock.now();
    const started = performance.now();
    let stage: BackupStage = "snapshot";
    /** The backup's file once stored: deleted again when its run fails before the manifest. */
    let placed: string | null = null;
    try {
      removeWork();
      const names = await removeUnfinished();
      const artifact = await artifactOnThread(deps.snapshotWorkerUrl ?? SOURCE_WORKER, work, stopping.signal);
      stage = "upload";
      const name = newBackupName(at, artifact.schemaVersion, names);
      await target.put(name, work.artifactPath);
      placed = name;
      const stored = await target.open(name);
      if (stored === null) throw new BackupStageError("upload", `${name} is not there after its upload`);
      if (stored.size !== artifact.bytes) {
        throw new BackupStageError("upload", `the stored copy is ${stored.size} bytes, not ${artifact.bytes}`);
      }
      const manifest: Manifest = {
        name,
        at: new Date(at).toISOString(),
        bytes: artifact.bytes,
        sha256: artifact.sha256,
        schema_version: artifact.schemaVersion,
        counts: artifact.counts,
      };
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
        failed("prune", error);
      }
      return manifest;
    } catch (error) {
      const failure = error instanceof BackupStageError ? error : new BackupStageError(stage, (error as Error).message);
      failed(failure.stage, failure);
      // If this fails too, the next run removes it: without a manifest it never counted.
      if (placed !== null) await target.remove(placed).catch(() => undefined);
      throw new AppError("backup_failed", `The backup failed (${failure.stage}): ${failure.message}`);
    } finally {
      removeWork();
    }
  }

  return {
    target,
    /** Takes a backup now; resolves with its manifest once it is verified and stored. */
    create(): Promise<Manifest> {
      if (running) throw new AppError("backup_running");
      const lock = holdFileLock(`${databasePath}-backup-lock`);
      const elsewhere = "Another process is taking a backup of this database; try again when it is done.";
      if (lock === null) throw new AppError("backup_running", elsewhere);
      const current = run().finally(() => {
        lock.release();
        running = null;
      });
      running = current;
      return current;
    },
    /** Every verified backup at the target, newest first. */
    list: () => manifests(),
    /** A backup's file, or its manifest (`<name>.json`); null for anything else. */
    async open(name: string): Promise<StoredFile | null> {
      if (!isBackupName(name) && backupOfManifest(name) === null) return null;
      return target.open(name);
    },
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
      await running?.catch(() => undefined);
    },
  };
}

export type Backups = ReturnType<typeof createBackups>;

/** Backups of this deployment, or null when its database is not a SQLite file (they are then unsupported). */
export function backupsOf(deps: BackupDeps): Backups | null {
  return backupSource(deps.config) === null ? null : createBackups(deps);
}
