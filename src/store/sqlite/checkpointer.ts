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

/**
 * Checkpoints the WAL from a Worker thread. A checkpoint copies the pages committed since the last
 * one into the database file and syncs both files; run by the committing connection (SQLite's
 * automatic checkpoint every 1,000 pages) it stopped the event loop for 4-6 ms about 30 times a
 * second under webhook load, which made the ingress ack p99 (bench/RESULTS.md). PASSIVE
 * checkpoints run beside the writer without blocking it. The server's connection keeps its
 * automatic checkpoint: it then finds almost every page copied already, and restarts the WAL.
 */
export function startCheckpointer(path: string, options: BackgroundCheckpoints): { stop(): void } {
  const { onError } = options;
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
      const was = Atomics.compareExchange(flags, 0, BOOTING, STOP);
      if (was === RUNNING) {
        Atomics.store(flags, 0, STOP);
        Atomics.wait(flags, 0, STOP, STOP_WAIT_MS);
      }
      void worker.terminate();
    },
  };
}
