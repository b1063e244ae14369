import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { openRequestLogFile } from "../store/sqlite/request-log-file.ts";
import { archiveOf, archiveSize } from "./archive.ts";
import { compressInto, decompressInto } from "./codec.ts";
import { inspectDatabase, inspectRequestLog } from "./inspect.ts";

/** Where a backup failed: each is counted apart in /metrics (switchboard_backup_failures_total). */
export const BACKUP_STAGES = ["snapshot", "verify", "upload", "prune"] as const;
export type BackupStage = (typeof BACKUP_STAGES)[number];

/** What a running backup is doing, in order: the step GET /admin/backups/{name}.json answers while it runs. */
export const BACKUP_STEPS = ["snapshot", "verify", "compress", "upload"] as const;
export type BackupStep = (typeof BACKUP_STEPS)[number];

/** A backup that failed, and where. */
export class BackupStageError extends Error {
  constructor(
    readonly stage: BackupStage,
    message: string,
  ) {
    super(message);
  }
}

/** The live files, and the work files of one backup beside them: removed whatever happens, and before the next one. */
export interface ArtifactRequest {
  databasePath: string;
  requestLogPath: string;
  /** The uncompressed snapshots of the database and of the request log. */
  snapshotPath: string;
  requestLogSnapshotPath: string;
  /** The compressed, verified archive that is then stored under the backup's name. */
  artifactPath: string;
  /** The archive's entries' time, in seconds. */
  at: number;
}

export interface Artifact {
  /** The database's migrations, and the request log file's schema version. */
  schemaVersion: number;
  requestLogVersion: number;
  /** Rows of every table of both files (their names differ). */
  counts: Record<string, number>;
  sha256: string;
  bytes: number;
  uncompressedBytes: number;
}

/** Runs `step`, naming `stage` in what it throws. */
async function during<T>(stage: BackupStage, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof BackupStageError ? error : new BackupStageError(stage, (error as Error).message);
  }
}

/**
 * A consistent copy of a live SQLite file: `VACUUM INTO` copies it as one read transaction on a
 * read-only connection of its own. In WAL mode the writers' commits go on meanwhile (they never wait
 * for a reader), and the copy is what was committed when it began.
 */
function vacuumInto(live: string, copy: string): void {
  let db: Database;
  try {
    // Read-only: it never writes the live file, nor creates one.
    db = new Database(live, { readonly: true });
  } catch (error) {
    throw new BackupStageError("snapshot", `cannot open ${live}: ${(error as Error).message}`);
  }
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.run("VACUUM INTO ?", [copy]);
  } finally {
    db.close();
  }
}

/**
 * A consistent snapshot of the deployment, verified and compressed: the request log's file first,
 * then the database (each a snapshot of its own file, the database's begun after the log's: so
 * every call in the log names keys, numbers and accounts the database holds), each checked (SQLite's
 * integrity check, its schema against this release's, row counts), then both archived (archive.ts)
 * and compressed as they are read, and the compressed file read back to prove it decompresses to
 * exactly the bytes that were checked. A deployment without a request log file gets an empty one.
 * Blocking SQLite calls throughout: run in a process of its own at a low priority (snapshot-child.ts),
 * told by `step` what comes next (after the snapshots, its priority drops: priority.ts).
 */
export async function makeArtifact(
  request: ArtifactRequest,
  step: (next: BackupStep) => void = () => {},
): Promise<Artifact> {
  const { databasePath, requestLogPath, snapshotPath, requestLogSnapshotPath, artifactPath } = request;
  const work = [snapshotPath, requestLogSnapshotPath, artifactPath];
  for (const path of work) rmSync(path, { force: true });
  try {
    await during("snapshot", () => {
      if (!existsSync(databasePath)) throw new BackupStageError("snapshot", `${databasePath} does not exist`);
      if (existsSync(requestLogPath)) vacuumInto(requestLogPath, requestLogSnapshotPath);
      else openRequestLogFile(requestLogSnapshotPath).close();
      vacuumInto(databasePath, snapshotPath);
    });
    // Nothing of the live files is held from here on.
    step("verify");
    const database = await during("verify", () => inspectDatabase(snapshotPath));
    const requestLog = await during("verify", () => inspectRequestLog(requestLogSnapshotPath));
    const files = [snapshotPath, requestLogSnapshotPath];
    step("compress");
    const compressed = await during("snapshot", () => compressInto(archiveOf(files, request.at), artifactPath));
    const size = archiveSize(files.map((path) => Bun.file(path).size));
    const readBack = await during("verify", () => decompressInto(artifactPath, null, size));
    if (readBack.sha256 !== compressed.sourceSha256 || compressed.sourceBytes !== size) {
      throw new BackupStageError("verify", "the compressed file does not decompress to the snapshot it was made from");
    }
    return {
      schemaVersion: database.schemaVersion,
      requestLogVersion: requestLog.schemaVersion,
      counts: Object.fromEntries(Object.entries({ ...requestLog.counts, ...database.counts }).sort()),
      sha256: compressed.sha256,
      bytes: compressed.bytes,
      uncompressedBytes: size,
    };
  } catch (error) {
    rmSync(artifactPath, { force: true });
    throw error;
  } finally {
    for (const path of [snapshotPath, requestLogSnapshotPath]) {
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    }
  }
}
