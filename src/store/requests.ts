import type { USAGE_KINDS } from "./vocabulary.ts";
/**
 * One proxied call of an account, as its request log keeps it (issue 19): what was asked, who
 * asked (the key's id, never the key), what we answered, and what upstream answered when it was
 * asked. Calls refused before the caller's key was known belong to no account and are not kept.
 */
export interface RequestRecord {
  /** The request id: X-Proxy-Request-Id, and `trace_id` of our errors. */
  id: string;
  accountId: string;
  at: number;
  apiKeyId: string;
  method: string;
  /** The allow-list row, e.g. "POST /{phone_number_id}/messages"; null when the call matched none. */
  route: string | null;
  phoneNumberId: string | null;
  wabaId: string | null;
  /** The status the caller got. */
  status: number;
  /** Our error's code when we answered (docs/errors.md#proxy-errors), else null. */
  errorCode: number | null;
  upstreamStatus: number | null;
  /** `error.code` and `error_subcode` of an upstream error answer. */
  upstreamErrorCode: number | null;
  upstreamErrorSubcode: number | null;
  /** Until upstream's response headers arrived. */
  upstreamMs: number | null;
  requestBytes: number | null;
  responseBytes: number | null;
  /** The message id upstream gave a successful send. */
  messageId: string | null;
}

/** Calls of one hour on one number (or WABA), counted by what happened to them. */
export interface UsageCount {
  accountId: string;
  /** The number, or the WABA for calls made at a WABA id. */
  targetId: string;
  hour: number;
  /** `forwarded` by allow-list row, `upstream_error` by upstream code, `refused` by our code. */
  kind: (typeof USAGE_KINDS)[number];
  label: string;
  count: number;
}

/** Calls of one account of one kind (forwarded, upstream error, refused). */
export interface CallTotal {
  accountId: string;
  kind: UsageCount["kind"];
  count: number;
}

/** Usage counts summed over a UTC day: one row per account, number (or WABA), day, kind and label. */
export interface DailyUsage {
  accountId: string;
  targetId: string;
  /** Start of the UTC day, epoch ms. */
  day: number;
  kind: UsageCount["kind"];
  label: string;
  count: number;
}

export interface RequestFilter {
  phoneNumberId?: string;
  /** 2, 4 or 5: the class of the status the caller got. */
  statusClass?: number;
  /** Ours or upstream's. */
  errorCode?: number;
  apiKeyId?: string;
  from?: number;
  to?: number;
  /** Keyset: records strictly older than this one (newest first). */
  before?: { at: number; id: string };
}

/** Where the purge cuts an account's part of the log: what is older than `before` goes. */
export interface LogCutoff {
  accountId: string;
  before: number;
}

/**
 * The request log's storage, a store of its own: on SQLite a database file beside the main one,
 * written by a thread of its own; on PostgreSQL tables written on a connection of their own. Either
 * way a batch of the log never waits for, nor holds, what the webhook relay writes.
 */
export interface RequestLogStore {
  /**
   * Writes one batch of records and the usage counts they add, in one transaction, resolving once
   * it is committed. A record already written (a batch sent again) is neither written nor counted again.
   */
  append(records: RequestRecord[]): Promise<void>;
  list(accountId: string, filter: RequestFilter, limit: number): Promise<RequestRecord[]>;
  get(accountId: string, id: string): Promise<RequestRecord | undefined>;
  /** The call(s) upstream gave this message id. */
  byMessageId(accountId: string, messageId: string): Promise<RequestRecord[]>;
  /** Usage counts of the hours in [from, to), of one account or of all. */
  usage(accountId: string | null, from: number, to: number): Promise<UsageCount[]>;
  /** Calls per account and kind in the hours that start in [from, to) (the operator console's overview). */
  callTotals(from: number, to: number): Promise<CallTotal[]>;
  /**
   * Usage per account, number, UTC day, kind and label in the hours that start in [from, to), of
   * one account or all; ordered by account, day, number, kind, label (the usage report for billing).
   */
  usageByDay(accountId: string | null, from: number, to: number): Promise<DailyUsage[]>;
  /**
   * Deletes each account's records from before its cut-off, at most `batch` rows per statement
   * (src/store/retention.ts says how purges behave); returns how many.
   */
  purgeRecords(cutoffs: LogCutoff[], batch: number): Promise<number>;
  /** Deletes each account's usage counts of hours before its cut-off, likewise. */
  purgeUsage(cutoffs: LogCutoff[], batch: number): Promise<number>;
  /**
   * `listener` is told of the writer's troubles that no batch's outcome tells: it died and was
   * started again (SQLite: its thread; the batches it had not written go to the new one), or its
   * own background work failed. One listener; a second replaces the first.
   */
  onWriterTrouble(listener: (trouble: WriterTrouble) => void): void;
}

export interface WriterTrouble {
  error: string;
  /** True when the writer died and a new one took over. */
  restarted: boolean;
}

const HOUR = 3_600_000;

/** How a record's call ended, as usage counts it: its kind and label. */
function outcomeOf(r: RequestRecord): [UsageCount["kind"], string] {
  if (r.errorCode !== null) return ["refused", String(r.errorCode)];
  if (r.upstreamErrorCode !== null || (r.upstreamStatus ?? 0) >= 400)
    return ["upstream_error", String(r.upstreamErrorCode ?? `http_${r.upstreamStatus}`)];
  return ["forwarded", r.route ?? r.method];
}

/** The usage counts records add: per account, number (or WABA) and hour, by outcome. */
export function usageOf(records: Iterable<RequestRecord>): UsageCount[] {
  const counts = new Map<string, UsageCount>();
  for (const r of records) {
    const targetId = r.phoneNumberId ?? r.wabaId;
    if (targetId === null) continue;
    const [kind, label] = outcomeOf(r);
    const hour = Math.floor(r.at / HOUR) * HOUR;
    const key = `${r.accountId}\u0000${targetId}\u0000${hour}\u0000${kind}\u0000${label}`;
    const count = counts.get(key);
    if (count) count.count++;
    else counts.set(key, { accountId: r.accountId, targetId, hour, kind, label, count: 1 });
  }
  return [...counts.values()];
}
