// The thread that takes a backup's snapshot (snapshot.ts) while the server's own thread goes on serving.
import { BackupStageError, makeArtifact, type ArtifactRequest } from "./snapshot.ts";

declare const self: Worker;

self.onmessage = async ({ data }: MessageEvent<ArtifactRequest>) => {
  try {
    postMessage({ artifact: await makeArtifact(data) });
  } catch (error) {
    postMessage({
      stage: error instanceof BackupStageError ? error.stage : "snapshot",
      error: (error as Error).message,
    });
  }
};
