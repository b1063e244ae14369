import type { Database } from "bun:sqlite";
import { usageOf, type LogRetention, type RequestRecord } from "../requests.ts";

/** Rows deleted per statement by the purge. */
const PURGE_BATCH = 5_000;

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
  const expired = db.prepare(`DELETE FROM request_log WHERE id IN
    (SELECT id FROM request_log WHERE account_id = ? AND at < ? LIMIT ${PURGE_BATCH})`);
  const expiredUsage = db.prepare(`DELETE FROM usage_hours WHERE (account_id, hour, target_id, kind, label) IN
    (SELECT account_id, hour, target_id, kind, label FROM usage_hours WHERE account_id = ? AND hour < ? LIMIT ${PURGE_BATCH})`);

  const write = db.transaction((records: RequestRecord[]) => {
    const added: RequestRecord[] = [];
    for (const r of records) {
      const { changes } = insert.run(
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
      );
      if (changes > 0) added.push(r);
    }
    for (const u of usageOf(added)) addUsage.run(u.accountId, u.targetId, u.hour, u.kind, u.label, u.count);
    return added.length;
  });

  /** One pass over every account, a bounded batch each, in one transaction; again while any had more. */
  const purgePass = db.transaction((retention: LogRetention) => {
    let requests = 0;
    let usage = 0;
    let more = false;
    for (const { accountId, before } of retention.accounts) {
      const gone = expired.run(accountId, before).changes;
      const goneUsage = expiredUsage.run(accountId, retention.usageBefore).changes;
      requests += gone;
      usage += goneUsage;
      more ||= gone === PURGE_BATCH || goneUsage === PURGE_BATCH;
    }
    return { requests, usage, more };
  });

  return {
    /** Writes a batch; returns how many of its records were new. */
    write: (records: RequestRecord[]): number => write(records),
    purge(retention: LogRetention): { requests: number; usage: number } {
      const total = { requests: 0, usage: 0 };
      for (let more = true; more; ) {
        const pass = purgePass(retention);
        total.requests += pass.requests;
        total.usage += pass.usage;
        more = pass.more;
      }
      return total;
    },
  };
}

export type RequestLogWrites = ReturnType<typeof requestLogWrites>;
