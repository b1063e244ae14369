// The thread of the backup's own process (snapshot-child.ts) that makes its artifact (snapshot.ts).
import { niceEveryThread, WORK_NICE } from "./priority.ts";
import { BackupStageError, makeArtifact, type ArtifactRequest } from "./snapshot.ts";

declare const self: Worker;

self.onmessage = async ({ data }: MessageEvent<ArtifactRequest>) => {
  try {
    const artifact = await makeArtifact(data, (step) => {
      // The snapshots are taken: nothing of the live files is held from here on.
      if (step === "verify") niceEveryThread(WORK_NICE);
      postMessage({ step });
    });
    postMessage({ artifact });
  } catch (error) {
    postMessage({
      stage: error instanceof BackupStageError ? error.stage : "snapshot",
      error: (error as Error).message,
    });
  }
};
