import type { SQL } from "bun";
import { and, desc, eq, gte, lt } from "drizzle-orm";
import { requestConditions } from "../request-filter.ts";
import { inBatches } from "../batches.ts";
import { usageOf, type LogCutoff, type RequestFilter, type RequestLogStore, type RequestRecord } from "../requests.ts";
import { toCallTotal, toDailyUsage, USAGE_SQL } from "../usage-sql.ts";
import { connect, type PgDb } from "./connect.ts";
import { requestLog, usageHours } from "./schema.ts";

type Row = Record<string, unknown>;

/**
 * The request log in the shared database, read on the pool like everything else, but written on
 * a connection of its own (opened with the first batch): a batch never waits for, nor holds, one
 * of the pool's connections, which the delivery queue's claims and ingress's commits use.
 */
export class PgRequestLog implements RequestLogStore {
  private writer: SQL | null = null;

  constructor(
    private readonly db: PgDb,
    private readonly url: string,
  ) {}

  private connection(): SQL {
    this.writer ??= connect(this.url, { max: 1 }).$client;
    return this.writer;
  }

  /**
   * One statement per table whatever the batch's size: columns as arrays, unnested (as the queue's
   * enqueue does). Usage counts only the records the insert added (a batch sent again adds none).
   */
  async append(records: RequestRecord[]) {
    const column = <K extends keyof RequestRecord>(k: K) => records.map((r) => r[k]);
    await this.connection().begin(async (tx) => {
      const added = (await tx.unsafe(
        `INSERT INTO request_log (id, account_id, at, api_key_id, method, route, phone_number_id, waba_id, status, error_code,
          upstream_status, upstream_error_code, upstream_error_subcode, upstream_ms, request_bytes, response_bytes, message_id)
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[],
          $11::int[], $12::int[], $13::int[], $14::float8[], $15::bigint[], $16::bigint[], $17::text[])
        ON CONFLICT (id) DO NOTHING RETURNING id`,
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
      )) as { id: string }[];
      const ids = new Set(added.map((row) => row.id));
      const usage = usageOf(ids.size === records.length ? records : records.filter((r) => ids.has(r.id)));
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
        .where(and(eq(requestLog.id, id), eq(requestLog.accountId, accountId)))
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

  async callTotals(from: number, to: number) {
    return ((await this.db.$client.unsafe(USAGE_SQL.callTotals, [from, to])) as Row[]).map(toCallTotal);
  }

  async usageByDay(accountId: string | null, from: number, to: number) {
    const params = accountId === null ? [from, to] : [from, to, accountId];
    return ((await this.db.$client.unsafe(USAGE_SQL.usageByDay(accountId !== null), params)) as Row[]).map(
      toDailyUsage,
    );
  }

  /** On the log's own connection too: each account's cut-off, every account at once, a batch per statement. */
  private purge(table: "request_log" | "usage_hours", time: "at" | "hour", cutoffs: LogCutoff[], batch: number) {
    const sql = this.connection();
    const params = [cutoffs.map((c) => c.accountId), cutoffs.map((c) => c.before), batch];
    const statement = `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT t.ctid FROM ${table} t
      JOIN unnest($1::text[], $2::bigint[]) AS c(account_id, before) ON t.account_id = c.account_id AND t.${time} < c.before
      LIMIT $3))`;
    return inBatches(batch, async () => (await sql.unsafe(statement, params)).count);
  }

  purgeRecords(cutoffs: LogCutoff[], batch: number) {
    return this.purge("request_log", "at", cutoffs, batch);
  }

  purgeUsage(cutoffs: LogCutoff[], batch: number) {
    return this.purge("usage_hours", "hour", cutoffs, batch);
  }

  /** PostgreSQL's client connects again by itself: a failed batch is its caller's to count. */
  onWriterTrouble() {}

  async close() {
    await this.writer?.close();
  }
}
