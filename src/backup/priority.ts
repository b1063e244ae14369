import { readdirSync } from "node:fs";
import { setPriority } from "node:os";

/**
 * The backup's own process runs below the server (child.ts). Its snapshots hold a read transaction
 * each, and while one is open the server's write-ahead log cannot start over: they run at `nice`'s
 * own default, low enough that the server's threads go first, not so low that a busy machine
 * starves them and the log grows for minutes. The checks and the compression that follow hold
 * nothing of the live files: they run at the lowest priority there is.
 */
export const SNAPSHOT_NICE = 10;
export const WORK_NICE = 19;

/**
 * Sets the nice value of every thread of this process, those the runtime already started included
 * (on Linux a thread's nice value is its own; threads started later inherit it from the one that
 * starts them). Elsewhere, the process's. Only ever raised: a process may always lower its priority.
 */
export function niceEveryThread(nice: number): void {
  let threads: number[] = [0];
  try {
    threads = readdirSync("/proc/self/task").map(Number);
  } catch {
    // Not Linux: one priority for the whole process.
  }
  for (const thread of threads) {
    try {
      setPriority(thread, nice);
    } catch {
      // A thread that ended meanwhile, or a system that refuses: the backup still runs.
    }
  }
}
