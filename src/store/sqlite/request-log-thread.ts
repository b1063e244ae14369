import type { LogCutoff, RequestRecord, WriterTrouble } from "../requests.ts";
import { recordValues, type LogTable } from "./request-log-writes.ts";

/** The log's file, and the main database's (null in memory), where an older release's log may wait to be moved. */
export interface LogFiles {
  path: string;
  mainPath: string | null;
}

/** What the serving thread asks of the writer thread (request-log-worker.ts), in order. */
export type ToWriter =
  | ({ kind: "open" } & LogFiles)
  /**
   * A batch of records as JSON text of their values (recordValues): one string crosses threads for
   * a fraction of what cloning its objects costs, and arrays for less than objects.
   */
  | { kind: "write"; seq: number; records: string }
  | { kind: "purge"; seq: number; table: LogTable; cutoffs: LogCutoff[]; batch: number }
  | { kind: "close"; seq: number };

/** An answer to a message; `seq` 0: a failure of the thread's own background work (the old log's move). */
export type FromWriter = { seq: number; result: unknown } | { seq: number; error: string };

type Sent = Exclude<ToWriter, { kind: "open" }>;

interface Pending {
  message: Sent;
  /** How many threads it went to: one that died with it is replaced and the message sent again. */
  sends: number;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** Whether the thread keeps the process alive: while it has work (Bun's Worker; lib.dom's type does not know ref). */
const holdProcess = (worker: Worker, hold: boolean) => (worker as unknown as Bun.Worker)[hold ? "ref" : "unref"]();

/** A message that went to this many threads, each of which died with it, is given up (it may be what kills them). */
const MAX_SENDS = 3;
/** A thread that dies again within this long of the last death is replaced only after it (not in a tight loop). */
const RESTART_AFTER_MS = 1_000;

/**
 * The request log's writer thread, seen from the serving thread: batches and purges go to it as
 * messages and settle when it answers, having committed them. The thread starts with the first
 * message (a CLI that only reads never starts it). If it dies, that is reported, a new one is
 * started and every message not yet answered is sent to it again: a batch the dead thread had
 * committed is then found written and neither written nor counted twice (request-log-writes.ts).
 */
export class RequestLogThread {
  private worker: Worker | null = null;
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  private started = false;
  private diedAt = Number.NEGATIVE_INFINITY;
  private lastError: string | null = null;
  private troubleListener: (trouble: WriterTrouble) => void = () => {};

  /**
   * `workerUrl`: request-log-worker.ts's URL. A module bundled into the compiled binary does not
   * keep its own import.meta.url, so src/main.ts resolves it there (see BackgroundCheckpoints).
   */
  constructor(
    private readonly files: LogFiles,
    private readonly workerUrl: string,
  ) {}

  onTrouble(listener: (trouble: WriterTrouble) => void): void {
    this.troubleListener = listener;
  }

  write(records: RequestRecord[]): Promise<number> {
    return this.send({ kind: "write", seq: 0, records: JSON.stringify(records.map(recordValues)) }) as Promise<number>;
  }

  purge(table: LogTable, cutoffs: LogCutoff[], batch: number): Promise<number> {
    return this.send({ kind: "purge", seq: 0, table, cutoffs, batch }) as Promise<number>;
  }

  /** Waits for what was sent to be written, then ends the thread (it closes its connection first). */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.worker || this.pending.size > 0) {
      if (!this.worker) this.start();
      await this.send({ kind: "close", seq: 0 }).catch(() => {});
    }
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    worker?.terminate();
    for (const p of this.pending.values()) p.reject(new Error("the request log is closed"));
    this.pending.clear();
  }

  /** Ends the thread at once, as a crash would (for tests of what follows). */
  kill(): void {
    this.worker?.terminate();
  }

  private send(message: Sent): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error("the request log is closed"));
    message.seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(message.seq, { message, sends: 1, resolve, reject });
      // The process must not exit while a batch waits to be written (a stop after SIGTERM).
      if (this.worker) {
        holdProcess(this.worker, true);
        this.worker.postMessage(message);
      } else if (!this.started) {
        this.start();
      }
    });
  }

  /** Starts the thread now rather than with the first message (a server, to move an older release's log). */
  start(): void {
    if (this.worker || this.closed) return;
    const worker = new Worker(this.workerUrl, { ref: false, smol: true });
    this.worker = worker;
    this.started = true;
    this.lastError = null;
    worker.addEventListener("message", ({ data }: MessageEvent<FromWriter>) => this.answered(data));
    worker.addEventListener("error", (event) => (this.lastError = event.message));
    worker.addEventListener("close", () => this.ended(worker));
    worker.postMessage({ kind: "open", ...this.files } satisfies ToWriter);
    for (const p of this.pending.values()) worker.postMessage(p.message);
    if (this.pending.size > 0) holdProcess(worker, true);
  }

  private answered(answer: FromWriter): void {
    if (answer.seq === 0 && "error" in answer) {
      this.troubleListener({ error: answer.error, restarted: false });
      return;
    }
    const p = this.pending.get(answer.seq);
    if (!p) return;
    this.pending.delete(answer.seq);
    if (this.pending.size === 0 && this.worker) holdProcess(this.worker, false);
    if ("error" in answer) p.reject(new Error(answer.error));
    else p.resolve(answer.result);
  }

  private ended(worker: Worker): void {
    if (worker !== this.worker || this.closed) return;
    this.worker = null;
    this.troubleListener({ error: this.lastError ?? "the thread exited", restarted: true });
    for (const [seq, p] of this.pending) {
      if (p.sends < MAX_SENDS) continue;
      this.pending.delete(seq);
      p.reject(new Error(`the request log's writer died ${MAX_SENDS} times with this batch`));
    }
    for (const p of this.pending.values()) p.sends++;
    const now = performance.now();
    const wait = RESTART_AFTER_MS - (now - this.diedAt);
    this.diedAt = now;
    if (wait <= 0) this.start();
    else setTimeout(() => !this.closed && !this.worker && this.start(), wait).unref();
  }
}
