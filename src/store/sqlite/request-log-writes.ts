import type { Database, Statement } from "bun:sqlite";
import { usageOf, type LogCutoff, type RequestRecord } from "../requests.ts";

/** The log's two tables, as a purge names them. */
export type LogTable = "records" | "usage";

/** A record's values in the order of the log's columns (the insert below binds them so): what crosses to the writer. */
export const recordValues = (r: RequestRecord) =>
  [
    r.id,
    r.accountId,
    r.at,
    r.apiKeyId,
    r.method,
    r.route,
    r.phoneNumberId,
    r.wabaId,
    r.status,
    r.errorCode,
    r.upstreamStatus,
    r.upstreamErrorCode,
    r.upstreamErrorSubcode,
    r.upstreamMs,
    r.requestBytes,
    r.responseBytes,
    r.messageId,
  ] as const;

export type RecordValues = ReturnType<typeof recordValues>;

/** The record of its values (for the usage counts of the records a batch added). */
const recordOf = (v: RecordValues): RequestRecord => ({
  id: v[0],
  accountId: v[1],
  at: v[2],
  apiKeyId: v[3],
  method: v[4],
  route: v[5],
  phoneNumberId: v[6],
  wabaId: v[7],
  status: v[8],
  errorCode: v[9],
  upstreamStatus: v[10],
  upstreamErrorCode: v[11],
  upstreamErrorSubcode: v[12],
  upstreamMs: v[13],
  requestBytes: v[14],
  responseBytes: v[15],
  messageId: v[16],
});

/**
 * Records with a message id per slot of the message-id index (request-log-file.ts, version 3): a
 * slot's part of the index is about 60 pages, so a batch of 500 dirties at most those, where an
 * index over the whole log took a page a record (bench/RESULTS.md#request-log).
 */
export const SLOT_RECORDS = 8192;

/**
 * The log's writes, on the writer thread's own connection: a batch in one transaction of plain
 * prepared statements, and the usage counts of the records it really added (a record already
 * there, from a batch sent again after the thread died, is neither written nor counted again),
 * summed in memory and written once per batch.
 */
export function requestLogWrites(db: Database) {
  const insert =
    db.prepare(`INSERT OR IGNORE INTO request_log (id, account_id, at, api_key_id, method, route, phone_number_id, waba_id,
    status, error_code, upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id,
    message_slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // A new slot after each start: slots need not be full, only few.
  let slot =
    (db
      .query<{ slot: number | null }, []>(
        "SELECT max(message_slot) AS slot FROM request_log WHERE message_id IS NOT NULL",
      )
      .get()?.slot ?? -1) + 1;
  let inSlot = 0;
  const addUsage =
    db.prepare(`INSERT INTO usage_hours (account_id, target_id, hour, kind, label, count) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (account_id, hour, target_id, kind, label) DO UPDATE SET count = count + excluded.count`);
  const expired: Record<LogTable, Statement<unknown, [string, number, number]>> = {
    records: db.prepare(`DELETE FROM request_log WHERE rowid IN
    (SELECT rowid FROM request_log WHERE account_id = ? AND at < ? LIMIT ?)`),
    usage: db.prepare(`DELETE FROM usage_hours WHERE (account_id, hour, target_id, kind, label) IN
    (SELECT account_id, hour, target_id, kind, label FROM usage_hours WHERE account_id = ? AND hour < ? LIMIT ?)`),
  };

  const write = db.transaction((records: RecordValues[]) => {
    const added: RequestRecord[] = [];
    for (const values of records) {
      const withId = values[16] !== null;
      const { changes } = insert.run(...values, withId ? slot : null);
      if (changes === 0) continue;
      added.push(recordOf(values));
      if (withId && ++inSlot === SLOT_RECORDS) {
        slot++;
        inSlot = 0;
      }
    }
    for (const u of usageOf(added)) addUsage.run(u.accountId, u.targetId, u.hour, u.kind, u.label, u.count);
    return added.length;
  });

  /** One pass over every account, a bounded batch each, in one transaction; `more` while any had more. */
  const purgePass = db.transaction((table: LogTable, cutoffs: LogCutoff[], batch: number) => {
    let removed = 0;
    let more = false;
    for (const { accountId, before } of cutoffs) {
      const gone = expired[table].run(accountId, before, batch).changes;
      removed += gone;
      more ||= gone === batch;
    }
    return { removed, more };
  });

  return {
    /** Writes a batch (each record as recordValues gives it); returns how many of its records were new. */
    write: (records: RecordValues[]): number => write(records),
    /** Passes over the accounts while any had more to delete; returns the rows removed. */
    purge(table: LogTable, cutoffs: LogCutoff[], batch: number): number {
      let removed = 0;
      for (let more = true; more; ) {
        const pass = purgePass(table, cutoffs, batch);
        removed += pass.removed;
        more = pass.more;
      }
      return removed;
    },
  };
}

export type RequestLogWrites = ReturnType<typeof requestLogWrites>;
