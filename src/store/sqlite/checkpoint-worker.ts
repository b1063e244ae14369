// The body of the background checkpointer (checkpointer.ts), run in its own Worker thread.
import { Database } from "bun:sqlite";
import { BOOTING, RUNNING, STOP, STOPPED, type CheckpointWorkerInit } from "./checkpointer.ts";

declare const self: Worker;

self.onmessage = ({ data }: MessageEvent<CheckpointWorkerInit>) => {
  const { path, everyMs, flags } = data;
  const stopped = () => {
    Atomics.store(flags, 0, STOPPED);
    Atomics.notify(flags, 0);
  };
  // The owner may have closed the store while this thread was starting: then it never opens the file.
  if (Atomics.compareExchange(flags, 0, BOOTING, RUNNING) !== BOOTING) return stopped();
  const db = new Database(path);
  let reported = false;
  const timer = setInterval(() => {
    if (Atomics.load(flags, 0) === STOP) {
      clearInterval(timer);
      db.close();
      return stopped();
    }
    try {
      // PASSIVE never takes the write lock and never waits: the server's commits go on meanwhile.
      db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    } catch (error) {
      if (!reported) postMessage({ error: String(error) });
      reported = true;
    }
  }, everyMs);
};
