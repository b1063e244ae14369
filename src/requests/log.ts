import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Worker } from "../runtime/worker.ts";
import type { Clock } from "../runtime/clock.ts";
import type { RequestLogStore, RequestRecord } from "../store/requests.ts";

/** A batch is handed to the store as soon as this many records wait, not only once a second. */
export const BATCH = 500;
/**
 * While a batch is still being written, the next one grows to this many before it is handed over:
 * a writer that lags gets fewer, larger transactions, each cheaper per record (the message-id
 * index's pages, bench/RESULTS.md#request-log).
 */
export const LAGGING_BATCH = 4 * BATCH;

/**
 * The serving thread's side of the request log: a record appended to a buffer in memory, handed to
 * the log's store in batches (every second of the injected clock, or every BATCH records), which writes them off
 * this thread (src/store/requests.ts). A call never waits for its record. The buffer and the
 * batches not yet written are bounded together: when the store falls behind for a while, records
 * are dropped and counted, never the call slowed or failed.
 */
export class RequestLog {
  private buffer: RequestRecord[] = [];
  /** Records handed to the store and not yet written. */
  private handed = 0;
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly deps: { store: RequestLogStore; clock: Clock; metrics: Metrics; logger: Logger },
    private readonly capacity: number,
  ) {
    deps.store.onWriterTrouble(({ error, restarted }) => {
      if (!restarted) return deps.logger.error("the request log's writer failed", { error });
      deps.metrics.requestLogWriterRestarts.inc();
      deps.logger.error("the request log's writer died and was started again; calls go on", { error });
    });
  }

  add(record: RequestRecord): void {
    if (this.buffer.length + this.handed >= this.capacity) {
      this.deps.metrics.requestLogDropped.inc();
      return;
    }
    this.buffer.push(record);
    if (this.buffer.length >= (this.writes.size === 0 ? BATCH : LAGGING_BATCH)) this.hand();
  }

  /** Hands the buffer to the store; a batch the store fails to write is counted as dropped. */
  private hand(): void {
    const records = this.buffer;
    this.buffer = [];
    this.handed += records.length;
    const write = this.deps.store
      .append(records)
      .catch((error: unknown) => {
        this.deps.metrics.requestLogDropped.inc(records.length);
        this.deps.logger.error("request log write failed", { error, records: records.length });
      })
      .finally(() => {
        this.handed -= records.length;
        this.writes.delete(write);
        // What waited for this write goes now, as one larger batch.
        if (this.writes.size === 0 && this.buffer.length >= BATCH) this.hand();
      });
    this.writes.add(write);
  }

  /** Hands over what the buffer holds and waits until every batch handed so far is written (or dropped). */
  async flush(): Promise<void> {
    if (this.buffer.length > 0) this.hand();
    await Promise.all(this.writes);
  }

  /** Flushes every second while the server runs, and once more at its stop. */
  worker(): Worker {
    let ticker: { stop(): void } | null = null;
    return {
      start: () => {
        ticker ??= this.deps.clock.everySecond(() => this.flush());
      },
      stop: async () => {
        ticker?.stop();
        ticker = null;
        await this.flush();
      },
    };
  }
}
