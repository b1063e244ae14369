import { readdirSync } from "node:fs";
import { constants, setPriority } from "node:os";
import type { Artifact, ArtifactRequest, BackupStage } from "./snapshot.ts";

/** What the child prints on its one line of standard output. */
export type ChildReply = { artifact: Artifact } | { stage: BackupStage; error: string };

/** The lowest CPU priority there is: the server's threads run first whenever they want a core. */
const LOWEST = constants.priority.PRIORITY_LOW;

/**
 * Lowers the priority of every thread of this process, those the runtime already started included
 * (on Linux a thread's nice value is its own; the threads started later inherit it from the one
 * that starts them). Elsewhere, the process's.
 */
function lowerPriority(): void {
  let threads: string[] = [];
  try {
    threads = readdirSync("/proc/self/task");
  } catch {
    // Not Linux: one priority for the whole process.
  }
  for (const thread of threads.length > 0 ? threads.map(Number) : [0]) {
    try {
      setPriority(thread, LOWEST);
    } catch {
      // A thread that ended meanwhile, or a system that refuses: the backup still runs.
    }
  }
}

/**
 * `switchboard backup-snapshot`, the backup's own process (child.ts starts it; not for people):
 * reads its ArtifactRequest as the first line of standard input, makes the artifact on a thread
 * (snapshot-worker.ts at `workerUrl`) at the lowest priority, and prints a ChildReply. Its standard
 * input stays open while the server that started it lives: when it closes first (the server died,
 * however), the process ends at once, mid-snapshot or not; the server's next backup removes what it
 * left.
 */
export async function snapshotChild(workerUrl: string): Promise<void> {
  lowerPriority();
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
      worker.onmessage = ({ data }: MessageEvent<ChildReply>) => resolve(data);
      worker.onerror = (event) => resolve({ stage: "snapshot", error: event.message });
      worker.postMessage(JSON.parse(input.slice(0, end)) as ArtifactRequest);
      lowerPriority();
    });
    process.stdin.on("end", () => process.exit(3));
  });
  const reply = await replied;
  process.stdout.write(`${JSON.stringify(reply)}\n`, () => process.exit("artifact" in reply ? 0 : 1));
}
