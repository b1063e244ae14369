import { and, desc, eq, gte, lt } from "drizzle-orm";
import { requestConditions } from "../request-filter.ts";
import type { RequestFilter, RequestLogStore, RequestRecord, UsageCount } from "../requests.ts";
import type { Retention } from "../types.ts";
import type { PgDb } from "./connect.ts";
import { requestLog, usageHours } from "./schema.ts";

/** Rows deleted per statement by the purge, so that no transaction grows with the log. */
const PURGE_BATCH = 5_000;

export class PgRequestLog implements RequestLogStore {
  constructor(private readonly db: PgDb) {}

  /** One statement per table whatever the batch's size: columns as arrays, unnested (as the queue's enqueue does). */
  async append(records: RequestRecord[], usage: UsageCount[]) {
    const column = <K extends keyof RequestRecord>(k: K) => records.map((r) => r[k]);
    await this.db.$client.begin(async (tx) => {
      await tx.unsafe(
        `INSERT INTO request_log (id, account_id, at, api_key_id, method, route, phone_number_id, waba_id, status, error_code,
          upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id)
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[],
          $11::int[], $12::int[], $13::int[], $14::float8[], $15::bigint[], $16::bigint[], $17::text[])
        ON CONFLICT (id) DO NOTHING`,
        [
          column("id"),
          column("accountId"),
          column("at"),
          column("apiKeyId"),
          column("method"),
          column("route"),
          column("phoneNumberId"),
          column("wabaId"),
          column("status"),
          column("errorCode"),
          column("upstreamStatus"),
          column("upstreamErrorCode"),
          column("upstreamErrorSubcode"),
          column("upstreamMs"),
          column("requestBytes"),
          column("responseBytes"),
          column("messageId"),
        ],
      );
      if (usage.length > 0) {
        await tx.unsafe(
          `INSERT INTO usage_hours (account_id, target_id, hour, kind, label, count)
          SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::int[])
          ON CONFLICT (account_id, hour, target_id, kind, label) DO UPDATE SET count = usage_hours.count + excluded.count`,
          [
            usage.map((u) => u.accountId),
            usage.map((u) => u.targetId),
            usage.map((u) => u.hour),
            usage.map((u) => u.kind),
            usage.map((u) => u.label),
            usage.map((u) => u.count),
          ],
        );
      }
    });
  }

  async list(accountId: string, filter: RequestFilter, limit: number) {
    return this.db
      .select()
      .from(requestLog)
      .where(requestConditions(requestLog, accountId, filter))
      .orderBy(desc(requestLog.at), desc(requestLog.id))
      .limit(limit);
  }

  async get(accountId: string, id: string) {
    return (
      await this.db
        .select()
        .from(requestLog)
        .where(and(eq(requestLog.accountId, accountId), eq(requestLog.id, id)))
    )[0];
  }

  async byMessageId(accountId: string, messageId: string) {
    return this.db
      .select()
      .from(requestLog)
      .where(and(eq(requestLog.messageId, messageId), eq(requestLog.accountId, accountId)));
  }

  async usage(accountId: string | null, from: number, to: number) {
    const range = and(gte(usageHours.hour, from), lt(usageHours.hour, to));
    return this.db
      .select()
      .from(usageHours)
      .where(accountId === null ? range : and(eq(usageHours.accountId, accountId), range))
      .orderBy(usageHours.hour, usageHours.targetId, usageHours.kind, usageHours.label);
  }

  async purge(now: number, retentionMs: Record<Retention, number>, usageBefore: number) {
    let requests = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH; requests += n) {
      const gone = await this.db.$client.unsafe(
        `DELETE FROM request_log WHERE id IN (SELECT r.id FROM request_log r JOIN accounts a ON a.id = r.account_id
        WHERE r.at < $1 - CASE a.retention WHEN '7d' THEN $2::bigint ELSE $3::bigint END LIMIT ${PURGE_BATCH})`,
        [now, retentionMs["7d"], retentionMs["24h"]],
      );
      n = gone.count;
    }
    const usage = (
      await this.db.delete(usageHours).where(lt(usageHours.hour, usageBefore)).returning({ hour: usageHours.hour })
    ).length;
    return { requests, usage };
  }
}
