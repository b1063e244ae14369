import { and, desc, eq, gte, lt } from "drizzle-orm";
import { requestConditions } from "../request-filter.ts";
import type { RequestFilter, RequestLogStore, RequestRecord, UsageCount } from "../requests.ts";
import type { Retention } from "../types.ts";
import type { Db } from "./open.ts";
import { requestLog, usageHours } from "./schema.ts";

/** Rows deleted per statement by the purge, so that no write holds the database long. */
const PURGE_BATCH = 5_000;

export class SqliteRequestLog implements RequestLogStore {
  /** One transaction per batch of plain prepared statements: drizzle's builder cost more per row than the insert itself, on the server's thread. */
  private readonly appendAll: (records: RequestRecord[], usage: UsageCount[]) => void;

  constructor(private readonly db: Db) {
    const insertRecord =
      db.$client.prepare(`INSERT OR IGNORE INTO request_log (id, account_id, at, api_key_id, method, route,
      phone_number_id, waba_id, status, error_code, upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes,
      response_bytes, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const addUsage =
      db.$client.prepare(`INSERT INTO usage_hours (account_id, target_id, hour, kind, label, count) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (account_id, hour, target_id, kind, label) DO UPDATE SET count = count + excluded.count`);
    this.appendAll = db.$client.transaction((records: RequestRecord[], usage: UsageCount[]) => {
      for (const r of records) {
        insertRecord.run(
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
      }
      for (const u of usage) addUsage.run(u.accountId, u.targetId, u.hour, u.kind, u.label, u.count);
    });
  }

  async append(records: RequestRecord[], usage: UsageCount[]) {
    this.appendAll(records, usage);
  }

  async list(accountId: string, filter: RequestFilter, limit: number) {
    return this.db
      .select()
      .from(requestLog)
      .where(requestConditions(requestLog, accountId, filter))
      .orderBy(desc(requestLog.at), desc(requestLog.id))
      .limit(limit)
      .all();
  }

  async get(accountId: string, id: string) {
    return this.db
      .select()
      .from(requestLog)
      .where(and(eq(requestLog.accountId, accountId), eq(requestLog.id, id)))
      .get();
  }

  async byMessageId(accountId: string, messageId: string) {
    return this.db
      .select()
      .from(requestLog)
      .where(and(eq(requestLog.messageId, messageId), eq(requestLog.accountId, accountId)))
      .all();
  }

  async usage(accountId: string | null, from: number, to: number) {
    const range = and(gte(usageHours.hour, from), lt(usageHours.hour, to));
    return this.db
      .select()
      .from(usageHours)
      .where(accountId === null ? range : and(eq(usageHours.accountId, accountId), range))
      .orderBy(usageHours.hour, usageHours.targetId, usageHours.kind, usageHours.label)
      .all();
  }

  async purge(now: number, retentionMs: Record<Retention, number>, usageBefore: number) {
    const expired =
      this.db.$client.prepare(`DELETE FROM request_log WHERE id IN (SELECT r.id FROM request_log r JOIN accounts a ON a.id = r.account_id
      WHERE r.at < $now - CASE a.retention WHEN '7d' THEN $week ELSE $day END LIMIT ${PURGE_BATCH})`);
    let requests = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH; requests += n)
      n = expired.run({ now, week: retentionMs["7d"], day: retentionMs["24h"] }).changes;
    const usage = this.db.$client
      .prepare("DELETE FROM usage_hours WHERE hour < $before")
      .run({ before: usageBefore }).changes;
    return { requests, usage };
  }
}
