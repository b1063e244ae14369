import { closeSync, fdatasync, openSync } from "node:fs";

/** Flushes what was written to a file down to the disk; resolves when the disk has it. */
export type FileSync = () => Promise<void>;

/**
 * fdatasync of the database's write-ahead log, run on Bun's thread pool so the event loop goes on
 * meanwhile. The connection commits with `synchronous = NORMAL`: a commit is in the WAL as soon as
 * it returns, safe from the process dying, but it reaches the disk only at the next sync, so a
 * power cut or a kernel crash could take back a commit that was already answered. A sync of the
 * WAL after the commit gives what `synchronous = FULL` gives, without the server's thread waiting
 * on the disk. It flushes the file, whichever descriptor wrote it, so this one only reads.
 * fdatasync, as SQLite's own syncs on Linux: the WAL's modification time is not needed to read
 * it back. In the relay bench it made the ack's p50 1.2-1.4 ms, against 1.6-1.9 with fsync
 * (bench/RESULTS.md).
 */
export function walFileSync(databasePath: string): FileSync & { close(): void } {
  let fd: number | null = null;
  const sync = () =>
    new Promise<void>((resolve, reject) => {
      try {
        // Opened at the first sync: SQLite creates the WAL when it first needs it, and deletes it
        // only when the last connection closes, so the store's own keeps this descriptor's file.
        fd ??= openSync(`${databasePath}-wal`, "r");
      } catch (error) {
        return reject(error);
      }
      fdatasync(fd, (error) => (error ? reject(error) : resolve()));
    });
  return Object.assign(sync, {
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  });
}

/**
 * Tells `observe` how long each sync took, in seconds: from its start until the server's thread
 * has its outcome, which is what the events waiting for it wait. A slow ack is often the disk's
 * flush, and this tells an operator so (switchboard_wal_sync_seconds).
 */
export function timedSync(sync: FileSync, observe: (seconds: number) => void): FileSync {
  return () => {
    const started = performance.now();
    return sync().finally(() => observe((performance.now() - started) / 1000));
  };
}

/**
 * One sync for all who wait together. A caller's writes are on disk only after a sync that BEGAN
 * after them, so `durable()` resolves after the next sync to start: when one is running it may
 * have started before the caller's commit, and the caller waits for the one after it, which
 * everyone who came during the running sync shares.
 */
export function sharedSync(sync: FileSync): () => Promise<void> {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const current: Promise<void> = sync().finally(() => {
      if (running === current) running = null;
    });
    running = current;
    return current;
  };
  return () => {
    if (next) return next;
    if (!running) return start();
    // Whether the running sync succeeds or fails, the next one is what these callers wait for.
    const after = running
      .catch(() => undefined)
      .then(() => {
        next = null;
        return start();
      });
    next = after;
    return after;
  };
}
