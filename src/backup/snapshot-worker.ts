// The thread of the backup's own process (snapshot-child.ts) that makes its artifact (snapshot.ts).
import { niceEveryThread, WORK_NICE } from "./priority.ts";
import { BackupStageError, makeArtifact, type ArtifactRequest } from "./snapshot.ts";

declare const self: Worker;

self.onmessage = async ({ data }: MessageEvent<ArtifactRequest>) => {
  try {
    postMessage({ artifact: await makeArtifact(data, () => niceEveryThread(WORK_NICE)) });
  } catch (error) {
    postMessage({
      stage: error instanceof BackupStageError ? error.stage : "snapshot",
      error: (error as Error).message,
    });
  }
};
