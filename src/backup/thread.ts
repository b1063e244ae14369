import type { Artifact, ArtifactRequest, BackupStage } from "./snapshot.ts";
import { BackupStageError } from "./snapshot.ts";

type Reply = { artifact: Artifact } | { stage: BackupStage; error: string };

/**
 * makeArtifact on a thread of its own (snapshot-worker.ts at `workerUrl`, resolved by main.ts as
 * the checkpoint thread's is): VACUUM INTO, the integrity check and the compression take seconds
 * on a large database, and the server's thread must not wait for any of it. `signal` ends the
 * thread (the server is stopping); the run then fails and its work files are removed by the caller.
 */
export function artifactOnThread(workerUrl: string, request: ArtifactRequest, signal: AbortSignal): Promise<Artifact> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl, { smol: true });
    const settle = (outcome: () => void) => {
      signal.removeEventListener("abort", abort);
      void worker.terminate();
      outcome();
    };
    const abort = () => settle(() => reject(new BackupStageError("snapshot", "stopped: the server is shutting down")));
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort);
    worker.onmessage = ({ data }: MessageEvent<Reply>) =>
      settle(() =>
        "artifact" in data ? resolve(data.artifact) : reject(new BackupStageError(data.stage, data.error)),
      );
    worker.onerror = (event) => settle(() => reject(new BackupStageError("snapshot", event.message)));
    worker.postMessage(request);
  });
}
