// The request log's writer (request-log-thread.ts), run in its own Worker thread with its own
// connection to the log's file: the serving thread only hands it batches.
import type { Database } from "bun:sqlite";
import { openRequestLogFile } from "./request-log-file.ts";
import { oldLogMover } from "./request-log-move.ts";
import type { FromWriter, ToWriter } from "./request-log-thread.ts";
import { requestLogWrites, type RecordValues, type RequestLogWrites } from "./request-log-writes.ts";

declare const self: Worker;

let db: Database | null = null;
let writes: RequestLogWrites | null = null;
/** Why the file could not be opened: every message is answered with it (the owner counts the batches as dropped). */
let failed: string | null = null;

const answer = (message: FromWriter) => postMessage(message);

/** A step of the old log's move, then the batches waiting, then the next step: new records never wait for the whole move. */
function moveStepByStep(mover: { step(): boolean }): void {
  setTimeout(() => {
    if (!db) return;
    try {
      if (mover.step()) moveStepByStep(mover);
    } catch (error) {
      // Left where it stopped: the next start goes on from the beginning (every copy is OR IGNORE).
      answer({ seq: 0, error: `moving the older release's request log failed: ${String(error)}` });
    }
  }, 0);
}

self.onmessage = ({ data }: MessageEvent<ToWriter>) => {
  if (data.kind === "open") {
    try {
      db = openRequestLogFile(data.path);
      writes = requestLogWrites(db);
    } catch (error) {
      failed = String(error);
      return;
    }
    try {
      const mover = data.mainPath === null ? null : oldLogMover(db, data.mainPath);
      if (mover) moveStepByStep(mover);
    } catch (error) {
      answer({ seq: 0, error: `moving the older release's request log failed: ${String(error)}` });
    }
    return;
  }
  if (data.kind === "close") {
    db?.close();
    db = writes = null;
    return answer({ seq: data.seq, result: null });
  }
  if (!writes) return answer({ seq: data.seq, error: failed ?? "the request log's file is closed" });
  try {
    const result =
      data.kind === "write"
        ? writes.write(JSON.parse(data.records) as RecordValues[])
        : writes.purge(data.table, data.cutoffs, data.batch);
    answer({ seq: data.seq, result });
  } catch (error) {
    answer({ seq: data.seq, error: String(error) });
  }
};
