import { niceEveryThread, SNAPSHOT_NICE } from "./priority.ts";
import type { Artifact, ArtifactRequest, BackupStage, BackupStep } from "./snapshot.ts";

/** What the child prints on its last line of standard output; each line before it is a ChildStep. */
export type ChildReply = { artifact: Artifact } | { stage: BackupStage; error: string };
export type ChildStep = { step: BackupStep };

/**
 * `switchboard backup-snapshot`, the backup's own process (child.ts starts it; not for people):
 * reads its ArtifactRequest as the first line of standard input, makes the artifact on a thread
 * (snapshot-worker.ts at `workerUrl`) below the server's priority (priority.ts), prints a line for
 * each step it begins (ChildStep), then its ChildReply. Its standard
 * input stays open while the server that started it lives: when it closes first (the server died,
 * however), the process ends at once, mid-snapshot or not; the server's next backup removes what it
 * left.
 */
export async function snapshotChild(workerUrl: string): Promise<void> {
  niceEveryThread(SNAPSHOT_NICE);
  let input = "";
  let started = false;
  const replied = new Promise<ChildReply>((resolve) => {
    process.stdin.on("data", (chunk: Buffer) => {
      if (started) return;
      input += chunk.toString("utf8");
      const end = input.indexOf("\n");
      if (end < 0) return;
      started = true;
      const worker = new Worker(workerUrl, { smol: true });
      worker.onmessage = ({ data }: MessageEvent<ChildReply | ChildStep>) => {
        if ("step" in data) process.stdout.write(`${JSON.stringify(data)}\n`);
        else resolve(data);
      };
      worker.onerror = (event) => resolve({ stage: "snapshot", error: event.message });
      worker.postMessage(JSON.parse(input.slice(0, end)) as ArtifactRequest);
    });
    process.stdin.on("end", () => process.exit(3));
  });
  const reply = await replied;
  process.stdout.write(`${JSON.stringify(reply)}\n`, () => process.exit("artifact" in reply ? 0 : 1));
}
