import { setImmediate as nextTurn } from "node:timers/promises";
import type { FileSync } from "../../src/store/sqlite/wal-sync.ts";

/**
 * A WAL sync (FileSync) that the test finishes by hand, to see what waits for the disk: `started`
 * counts the syncs begun, `finish` ends the oldest running one (with `error`, as a failed fsync).
 */
export function manualSync() {
  const running: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let started = 0;
  const sync: FileSync = () =>
    new Promise<void>((resolve, reject) => {
      started++;
      running.push({ resolve, reject });
    });
  return {
    sync,
    get started() {
      return started;
    },
    /** Waits (turn by turn, at most `turns`) until `count` syncs have begun. */
    async startedCount(count: number, turns = 10_000) {
      for (let i = 0; i < turns && started < count; i++) await nextTurn();
      return started;
    },
    async finish(error?: Error) {
      const oldest = running.shift()!;
      if (error) oldest.reject(error);
      else oldest.resolve();
      // Lets the promise reactions (and a next sync's start) run.
      for (let i = 0; i < 5; i++) await nextTurn();
    },
  };
}

/** Whether each promise has settled yet, read without waiting. */
export function settledFlags(promises: Promise<unknown>[]): boolean[] {
  const done = promises.map(() => false);
  promises.forEach(
    (p, i) =>
      void p.then(
        () => (done[i] = true),
        () => (done[i] = true),
      ),
  );
  return done;
}
