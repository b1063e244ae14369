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
import type { BackupTarget, StoredFile } from "./target.ts";

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

/** Where a backup's work happens beside the database: the snapshots of both files, and the artifact. */
function workPaths(databasePath: string) {
  return {
    databasePath,
    requestLogPath: requestLogPath(databasePath),
    snapshotPath: `${databasePath}-backup-snapshot`,
    requestLogSnapshotPath: `${databasePath}-backup-log-snapshot`,
    artifactPath: `${databasePath}-backup-artifact`,
  };
}
type WorkPaths = ReturnType<typeof workPaths>;

/** Off the serving thread: unlinking a large file takes the file system a while. */
async function removeWork(work: WorkPaths): Promise<void> {
  for (const path of [work.snapshotPath, work.requestLogSnapshotPath, work.artifactPath]) {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) await rm(`${path}${suffix}`, { force: true });
  }
}

/** `task` at the target, a BACKUP_TO that is a symbolic link answered as such (SymlinkRefused). */
async function located<T>(task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    if (error instanceof SymlinkRefused) throw new AppError("backup_location_refused", error.message);
    throw error;
  }
}

/** Backups whose manifest is missing were cut off before they counted (a crash between the two puts). */
async function removeUnfinished(target: BackupTarget): Promise<string[]> {
  await target.sweep();
  const names = await target.list();
  for (const name of names) if (isBackupName(name) && !names.includes(manifestName(name))) await target.remove(name);
  return target.list();
}

/** The last backup that succeeded and the last that failed, in the metrics and the log as they happen. */
function backupHistory(deps: Pick<BackupDeps, "clock" | "logger" | "metrics">, where: string) {
  const { clock, logger, metrics } = deps;
  const history = {
    lastSuccess: null as Manifest | null,
    lastFailure: null as BackupFailure | null,
    /** `seconds` is null for a backup this process did not take (its duration is not known here). */
    succeeded(manifest: Manifest, seconds: number | null) {
      history.lastSuccess = manifest;
      metrics.backupLastSuccess.set(Date.parse(manifest.at) / 1000);
      metrics.backupLastBytes.set(manifest.bytes);
      if (seconds !== null) metrics.backupLastDuration.set(seconds);
    },
    failed(name: string | null, stage: BackupStage, error: unknown) {
      const message = (error as Error).message;
      history.lastFailure = { name, at: new Date(clock.now()).toISOString(), stage, error: message };
      metrics.backupFailures.inc({ stage });
      const what = stage === "prune" ? "deleting old backups failed; the next run tries again" : "backup failed";
      logger.error(what, { name, stage, error: message, to: where });
    },
  };
  return history;
}

/** What one backup's run works with. */
interface RunContext {
  deps: BackupDeps;
  work: WorkPaths;
  target: BackupTarget;
  key: Uint8Array;
  signal: AbortSignal;
  history: ReturnType<typeof backupHistory>;
  manifests: () => Promise<Manifest[]>;
}

async function prune(run: RunContext): Promise<void> {
  const { deps, target } = run;
  for (const old of backupsToDelete(await run.manifests(), deps.config.backup.keep, deps.clock.now())) {
    // The manifest first: a backup without one no longer counts, and the next run removes its file.
    await target.remove(manifestName(old.name));
    await target.remove(old.name);
    deps.logger.info("old backup deleted", { name: old.name, keep: deps.config.backup.keep });
  }
}

/** The snapshot stage: the backup named, both files snapshotted and the artifact made and verified in a child. */
async function snapshot(run: RunContext, state: Begun, named: (name: string) => void) {
  const { deps, work } = run;
  await removeWork(work);
  const schemaVersion = liveSchemaVersion(work.databasePath);
  const name = newBackupName(state.at, schemaVersion, await removeUnfinished(run.target));
  state.name = name;
  named(name);
  // Everything the server was told before the backup began is then in the request log's file.
  await deps.beforeSnapshot?.();
  const request: ArtifactRequest = { ...work, at: Math.floor(state.at / 1000) };
  const artifact = await artifactInChild(deps.backupCommand ?? SOURCE_COMMAND, request, run.signal, (step) => {
    state.step = step;
  });
  if (artifact.schemaVersion !== schemaVersion) {
    throw new BackupStageError("verify", "the database was migrated while the backup was taken; take another");
  }
  return { name, artifact };
}

/** The stored copy, checked to be the artifact's size. */
async function checkStored(target: BackupTarget, name: string, bytes: number): Promise<void> {
  const stored = await target.open(name);
  if (stored === null) throw new BackupStageError("upload", `${name} is not there after its upload`);
  if (stored.size !== bytes)
    throw new BackupStageError("upload", `the stored copy is ${stored.size} bytes, not ${bytes}`);
}

type Artifact = Awaited<ReturnType<typeof artifactInChild>>;

/** The backup's signed manifest, written last: a backup counts once its manifest is there. */
async function putManifest(run: RunContext, state: Begun, name: string, artifact: Artifact): Promise<Manifest> {
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
    run.key,
  );
  await run.target.putText(manifestName(name), JSON.stringify(manifest, null, 2));
  return manifest;
}

/** One backup, from its snapshot to its manifest, then the pruning of old ones; its work files removed at the end. */
async function runBackup(run: RunContext, state: Begun, named: (name: string) => void): Promise<Manifest> {
  const { target, history, deps } = run;
  const started = performance.now();
  let stage: BackupStage = "snapshot";
  /** The backup's file once stored: deleted again when its run fails before the manifest. */
  let placed: string | null = null;
  try {
    const { name, artifact } = await snapshot(run, state, named);
    stage = "upload";
    state.step = "upload";
    await target.put(name, run.work.artifactPath);
    placed = name;
    await checkStored(target, name, artifact.bytes);
    const manifest = await putManifest(run, state, name, artifact);
    placed = null;
    const seconds = (performance.now() - started) / 1000;
    history.succeeded(manifest, seconds);
    deps.logger.info("backup taken", {
      name,
      bytes: manifest.bytes,
      seconds: Number(seconds.toFixed(3)),
      to: target.where,
    });
    // The new backup counts; the old ones are deleted at the next run when this fails.
    await prune(run).catch((error) => history.failed(name, "prune", error));
    return manifest;
  } catch (error) {
    const failure = error instanceof BackupStageError ? error : new BackupStageError(stage, (error as Error).message);
    history.failed(state.name, failure.stage, failure);
    // If this fails too, the next run removes it: without a manifest it never counted.
    if (placed !== null) await target.remove(placed).catch(() => undefined);
    throw new AppError("backup_failed", `The backup failed (${failure.stage}): ${failure.message}`);
  } finally {
    await removeWork(run.work);
  }
}

type Running = Begun & { done: Promise<Manifest> };

/** Where backup `name` is: taken (its manifest), still running, failed, or unknown here (null). */
async function statusOf(
  name: string,
  running: Running | null,
  target: BackupTarget,
  history: { lastFailure: BackupFailure | null },
): Promise<
  | { state: "taken"; manifest: Manifest }
  | { state: "running"; at: string; step: BackupStep }
  | { state: "failed"; failure: BackupFailure }
  | null
> {
  if (!isBackupName(name)) return null;
  if (running?.name === name) return { state: "running", at: new Date(running.at).toISOString(), step: running.step };
  const text = await located(() => target.readText(manifestName(name)));
  const manifest = text === null ? null : parseManifest(text);
  if (manifest?.name === name) return { state: "taken", manifest };
  const { lastFailure } = history;
  if (lastFailure?.name === name) return { state: "failed", failure: lastFailure };
  return null;
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
  const target = openTarget(to, deps.config.backup.s3, deploymentFiles(databasePath));
  const manifests = () =>
    listManifests(target, (name) => deps.logger.warn("a backup's manifest cannot be read; it is left out", { name }));
  const stopping = new AbortController();
  const history = backupHistory(deps, target.where);
  const run: RunContext = {
    deps,
    work: workPaths(databasePath),
    target,
    key: manifestKey(deploymentKey(deps.config, deps.random)),
    signal: stopping.signal,
    history,
    manifests,
  };
  let running: Running | null = null;

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
    const state: Begun = { name: null, at: deps.clock.now(), step: "snapshot" };
    const done = runBackup(run, state, naming.resolve).finally(() => {
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
    status: (name: string) => statusOf(name, running, target, history),
    /** The backup under way: its name (null until it has one), when it began and its step; null when none runs here. */
    current: (): { name: string | null; at: string; step: BackupStep } | null =>
      running && { name: running.name, at: new Date(running.at).toISOString(), step: running.step },
    lastFailure: (): BackupFailure | null => history.lastFailure,
    lastSuccess: (): Manifest | null => history.lastSuccess,
    /** Reads the newest backup kept at the target, so that a restarted server knows how old it is. */
    async readLastSuccess(): Promise<void> {
      const newest = (await manifests())[0];
      if (newest && !history.lastSuccess) history.succeeded(newest, null);
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
