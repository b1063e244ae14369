import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { compressFile, decompressFile } from "./codec.ts";
import { inspectDatabase, type DatabaseFacts } from "./inspect.ts";

/** Where a backup failed: each is counted apart in /metrics (switchboard_backup_failures_total). */
export const BACKUP_STAGES = ["snapshot", "verify", "upload", "prune"] as const;
export type BackupStage = (typeof BACKUP_STAGES)[number];

/** A backup that failed, and where. */
export class BackupStageError extends Error {
  constructor(
    readonly stage: BackupStage,
    message: string,
  ) {
    super(message);
  }
}

/** The work files of one backup, beside the database: removed whatever happens, and before the next one. */
export interface ArtifactRequest {
  databasePath: string;
  /** The uncompressed snapshot. */
  snapshotPath: string;
  /** The compressed, verified file that is then stored under the backup's name. */
  artifactPath: string;
}

export interface Artifact extends DatabaseFacts {
  sha256: string;
  bytes: number;
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
 * A consistent snapshot of the live database, verified and compressed. `VACUUM INTO` copies it as
 * one read transaction on a connection of its own: in WAL mode the server's commits go on meanwhile
 * (they never wait for a reader), and the copy is what was committed when it began. Then it is
 * checked (SQLite's integrity check, migrations, row counts), compressed, and the compressed file is
 * read back to prove it decompresses to exactly the bytes that were checked. Blocking SQLite calls
 * throughout: run on a thread of its own in the server (snapshot-worker.ts).
 */
export async function makeArtifact(request: ArtifactRequest): Promise<Artifact> {
  const { databasePath, snapshotPath, artifactPath } = request;
  for (const path of [snapshotPath, artifactPath]) rmSync(path, { force: true });
  try {
    await during("snapshot", () => {
      // Read-only: it never writes the live file, nor creates one (a database that is not there is
      // an error, not an empty backup).
      let db: Database;
      try {
        db = new Database(databasePath, { readonly: true });
      } catch (error) {
        throw new BackupStageError("snapshot", `cannot open ${databasePath}: ${(error as Error).message}`);
      }
      try {
        db.exec("PRAGMA busy_timeout = 5000");
        db.run("VACUUM INTO ?", [snapshotPath]);
      } finally {
        db.close();
      }
    });
    const facts = await during("verify", () => inspectDatabase(snapshotPath));
    const compressed = await during("snapshot", () => compressFile(snapshotPath, artifactPath));
    const readBack = await during("verify", () => decompressFile(artifactPath, null));
    if (readBack !== compressed.sourceSha256) {
      throw new BackupStageError("verify", "the compressed file does not decompress to the snapshot it was made from");
    }
    return { ...facts, sha256: compressed.sha256, bytes: compressed.bytes };
  } catch (error) {
    rmSync(artifactPath, { force: true });
    throw error;
  } finally {
    rmSync(snapshotPath, { force: true });
  }
}
