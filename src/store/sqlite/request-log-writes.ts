import type { Database, Statement } from "bun:sqlite";
import { usageOf, type LogCutoff, type RequestRecord } from "../requests.ts";

/** The log's two tables, as a purge names them. */
export type LogTable = "records" | "usage";

/** A record's values in the order of the log's columns (the insert below binds them so). */
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

/**
 * The log's writes, on the writer thread's own connection: a batch in one transaction of plain
 * prepared statements, and the usage counts of the records it really added (a record already
 * there, from a batch sent again after the thread died, is neither written nor counted again),
 * summed in memory and written once per batch.
 */
export function requestLogWrites(db: Database) {
  const insert =
    db.prepare(`INSERT OR IGNORE INTO request_log (id, account_id, at, api_key_id, method, route, phone_number_id, waba_id,
    status, error_code, upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const addUsage =
    db.prepare(`INSERT INTO usage_hours (account_id, target_id, hour, kind, label, count) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (account_id, hour, target_id, kind, label) DO UPDATE SET count = count + excluded.count`);
  const expired: Record<LogTable, Statement<unknown, [string, number, number]>> = {
    records: db.prepare(`DELETE FROM request_log WHERE rowid IN
    (SELECT rowid FROM request_log WHERE account_id = ? AND at < ? LIMIT ?)`),
    usage: db.prepare(`DELETE FROM usage_hours WHERE (account_id, hour, target_id, kind, label) IN
    (SELECT account_id, hour, target_id, kind, label FROM usage_hours WHERE account_id = ? AND hour < ? LIMIT ?)`),
  };

  const write = db.transaction((records: RequestRecord[]) => {
    const added: RequestRecord[] = [];
    for (const r of records) {
      const { changes } = insert.run(...recordValues(r));
      if (changes > 0) added.push(r);
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
    /** Writes a batch; returns how many of its records were new. */
    write: (records: RequestRecord[]): number => write(records),
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
