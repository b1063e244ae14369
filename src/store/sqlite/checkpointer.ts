import type { Database } from "bun:sqlite";

/** flags[0], shared between the store and its checkpoint thread: where the thread is. */
export const BOOTING = 0;
export const RUNNING = 1;
export const STOP = 2;
export const STOPPED = 3;

/** The message that starts checkpoint-worker.ts. */
export interface CheckpointWorkerInit {
  path: string;
  everyMs: number;
  flags: Int32Array;
}

export interface BackgroundCheckpoints {
  /**
   * checkpoint-worker.ts's URL. A module bundled into the compiled binary does not keep its own
   * import.meta.url, so the caller resolves it from src/main.ts, which the binary keeps at the root
   * of src/'s layout beside its second entry point (package.json "build").
   */
  workerUrl: string;
  onError(message: string): void;
}

/** How often the background thread copies committed WAL pages into the database file. */
const CHECKPOINT_EVERY_MS = 10;
/** close() waits at most this long for the thread to close its connection. */
const STOP_WAIT_MS = 2_000;
/** SQLite's own automatic checkpoint, in WAL pages: what the connection goes back to if the thread fails. */
export const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;
/** The server's own automatic checkpoint while the thread runs (about 40 MB of WAL; see below). */
export const AUTOCHECKPOINT_WITH_THREAD_PAGES = 10_000;
/** A WAL that grew past this (a long read held checkpoints back) is cut back to it when it restarts. */
export const WAL_SIZE_LIMIT_BYTES = 2 * AUTOCHECKPOINT_WITH_THREAD_PAGES * 4096;

/**
 * Checkpoints the WAL from a Worker thread. A checkpoint copies the pages committed since the last
 * one into the database file and syncs both files; run by the committing connection (SQLite's
 * automatic checkpoint every 1,000 pages) it stopped the event loop for 4-6 ms about 30 times a
 * second under webhook load, which made the ingress ack p99 (bench/RESULTS.md). PASSIVE
 * checkpoints run beside the writer without blocking it.
 *
 * The WAL starts over from its beginning when a write begins after the thread has copied all of
 * it: about 19 times a second in the relay bench at 1,000 events/s (an strace of the server's
 * thread: the WAL's header rewritten and synced). Under heavier writes the thread may never find
 * it fully copied (new commits land while it syncs), and then only a checkpoint by the writer
 * itself lets the WAL start over; so the server's connection still checkpoints on its own, but
 * only every AUTOCHECKPOINT_WITH_THREAD_PAGES, to bound the WAL's size.
 * That checkpoint copies what the thread has not yet copied and syncs both files, 1-3 ms inside a
 * commit; at SQLite's 1,000 pages it came about 20 times a second at 1,000 events/s, and the 1 %
 * slowest commits took 1.5-1.6 ms instead of 0.5 (bench/webhooks/commit-latency.ts).
 */
export function startCheckpointer(sqlite: Database, path: string, options: BackgroundCheckpoints): { stop(): void } {
  let stopped = false;
  const onError = (message: string) => {
    // Without the thread, the connection's own checkpoints must copy everything: small ones, often.
    if (!stopped) sqlite.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    options.onError(message);
  };
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_WITH_THREAD_PAGES}`);
  sqlite.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const flags = new Int32Array(new SharedArrayBuffer(4));
  // `ref: false`: the thread never keeps the process alive.
  const worker = new Worker(options.workerUrl, { ref: false, smol: true });
  worker.onmessage = ({ data }: MessageEvent<{ error: string }>) => onError(data.error);
  worker.onerror = (event) => onError(event.message);
  worker.postMessage({ path, everyMs: CHECKPOINT_EVERY_MS, flags } satisfies CheckpointWorkerInit);
  return {
    /**
     * Synchronous, as the store's close() is: a running thread is asked to stop and awaited until
     * it has closed its connection; one still starting is told never to open the file.
     */
    stop() {
      stopped = true;
      const was = Atomics.compareExchange(flags, 0, BOOTING, STOP);
      if (was === RUNNING) {
        Atomics.store(flags, 0, STOP);
        Atomics.wait(flags, 0, STOP, STOP_WAIT_MS);
      }
      void worker.terminate();
    },
  };
}
