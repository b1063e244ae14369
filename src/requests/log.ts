import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Worker } from "../runtime/deps.ts";
import { intervalWorker } from "../runtime/interval-worker.ts";
import { hourOf } from "../store/hours.ts";
import type { RequestLogStore, RequestRecord, UsageCount } from "../store/requests.ts";

export const FLUSH_EVERY_MS = 1000;
/**
 * A batch is written as soon as this many records wait, not only once a second: on SQLite the
 * write runs on the server's thread, and 500 rows hold it about a millisecond where a second's
 * worth at 10,000 calls a second held it for tens (bench/RESULTS.md, Proxy: request log).
 */
export const BATCH = 500;

/**
 * The request log's side of a proxied call: a record appended to a bounded buffer in memory and
 * written with the others about once a second, in one transaction with the usage counts they add
 * (as the rate limits' write-through does). A call never waits for its record; when the buffer is
 * full (the database slower than the calls for a while) records are dropped and counted, never
 * the call slowed or failed.
 */
export class RequestLog {
  private buffer: RequestRecord[] = [];
  private flushing: Promise<unknown> | null = null;

  constructor(
    private readonly deps: { store: RequestLogStore; metrics: Metrics; logger: Logger },
    private readonly capacity: number,
  ) {}

  add(record: RequestRecord): void {
    if (this.buffer.length >= this.capacity) {
      this.deps.metrics.requestLogDropped.inc();
      return;
    }
    this.buffer.push(record);
    if (this.buffer.length === BATCH && !this.flushing) {
      this.flushing = this.flush()
        .catch((error: unknown) => this.deps.logger.error("request log write failed", { error }))
        .finally(() => (this.flushing = null));
    }
  }

  /** Writes what the buffer holds; on failure the records are counted as dropped (the buffer must not grow without bound). */
  async flush(): Promise<number> {
    if (this.buffer.length === 0) return 0;
    const records = this.buffer.splice(0, BATCH);
    try {
      await this.deps.store.append(records, usageOf(records));
    } catch (error) {
      this.deps.metrics.requestLogDropped.inc(records.length);
      throw error;
    }
    // A backlog (the writes fell behind for a while) goes out a batch at a time, letting calls run between them.
    if (this.buffer.length >= BATCH) await new Promise((resolve) => setImmediate(resolve)).then(() => this.flush());
    return records.length;
  }

  worker(): Worker {
    return intervalWorker("request log", FLUSH_EVERY_MS, () => this.flush(), this.deps.logger);
  }
}

/** The usage counts a batch of records adds: per account, number (or WABA) and hour, by outcome. */
export function usageOf(records: RequestRecord[]): UsageCount[] {
  const counts = new Map<string, UsageCount>();
  for (const r of records) {
    const targetId = r.phoneNumberId ?? r.wabaId;
    if (targetId === null) continue;
    const [kind, label]: [UsageCount["kind"], string] =
      r.errorCode !== null
        ? ["refused", String(r.errorCode)]
        : r.upstreamErrorCode !== null || (r.upstreamStatus ?? 0) >= 400
          ? ["upstream_error", String(r.upstreamErrorCode ?? `http_${r.upstreamStatus}`)]
          : ["forwarded", r.route ?? r.method];
    const hour = hourOf(r.at);
    const key = `${r.accountId}\u0000${targetId}\u0000${hour}\u0000${kind}\u0000${label}`;
    const count = counts.get(key);
    if (count) count.count++;
    else counts.set(key, { accountId: r.accountId, targetId, hour, kind, label, count: 1 });
  }
  return [...counts.values()];
}
