import type { Database } from "bun:sqlite";
import { and, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { requestConditions } from "../request-filter.ts";
import type { LogCutoff, RequestFilter, RequestLogStore, RequestRecord, WriterTrouble } from "../requests.ts";
import { toCallTotal, toDailyUsage, USAGE_SQL } from "../usage-sql.ts";
import { requestLog, usageHours } from "./request-log-schema.ts";
import { RequestLogThread, type LogFiles } from "./request-log-thread.ts";

type Row = Record<string, unknown>;

/** Every slot of the message-id index from its first to its last (request-log-file.ts, version 3). */
const SLOTS = sql.raw(`WITH RECURSIVE slots(slot) AS (
  SELECT min(message_slot) FROM request_log WHERE message_id IS NOT NULL
  UNION ALL SELECT slot + 1 FROM slots WHERE slot < (SELECT max(message_slot) FROM request_log WHERE message_id IS NOT NULL)
) SELECT slot FROM slots`);

/**
 * The request log in its own file (request-log-file.ts): read on the serving thread's connection
 * to it (WAL readers never wait for the writer), written by its own thread (request-log-thread.ts).
 */
export class SqliteRequestLog implements RequestLogStore {
  private readonly db;
  readonly thread: RequestLogThread;

  constructor(
    private readonly sqlite: Database,
    files: LogFiles,
    workerUrl: string,
  ) {
    this.db = drizzle(sqlite, { schema: { requestLog, usageHours } });
    this.thread = new RequestLogThread(files, workerUrl);
  }

  async append(records: RequestRecord[]) {
    await this.thread.write(records);
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
      .where(and(eq(requestLog.id, id), eq(requestLog.accountId, accountId)))
      .get();
  }

  async byMessageId(accountId: string, messageId: string) {
    // The index is by slot and the id's tail (request-log-file.ts, version 3): each slot from the
    // first to the last is probed, and the null slot of records from before; the whole id is
    // checked on the rows found.
    const found = (slots: SQL) =>
      this.db
        .select()
        .from(requestLog)
        .where(
          and(
            slots,
            sql`substr(${requestLog.messageId}, -16) = substr(${messageId}, -16)`,
            eq(requestLog.messageId, messageId),
            // Unary +: the account's index would be the planner's pick without statistics.
            sql`+${requestLog.accountId} = ${accountId}`,
          ),
        )
        .all();
    return [...found(sql`message_slot IS NULL`), ...found(sql`message_slot IN (${SLOTS})`)];
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

  async callTotals(from: number, to: number) {
    return this.sqlite.query<Row, [number, number]>(USAGE_SQL.callTotals).all(from, to).map(toCallTotal);
  }

  async usageByDay(accountId: string | null, from: number, to: number) {
    const rows =
      accountId === null
        ? this.sqlite.query<Row, [number, number]>(USAGE_SQL.usageByDay(false)).all(from, to)
        : this.sqlite.query<Row, [number, number, string]>(USAGE_SQL.usageByDay(true)).all(from, to, accountId);
    return rows.map(toDailyUsage);
  }

  /** On the writer thread, which holds no request of the server's meanwhile. */
  purgeRecords(cutoffs: LogCutoff[], batch: number) {
    return this.thread.purge("records", cutoffs, batch);
  }

  purgeUsage(cutoffs: LogCutoff[], batch: number) {
    return this.thread.purge("usage", cutoffs, batch);
  }

  onWriterTrouble(listener: (trouble: WriterTrouble) => void) {
    this.thread.onTrouble(listener);
  }

  /** Waits for the batches handed over to be written, then closes both connections. */
  async close() {
    await this.thread.close();
    this.sqlite.close();
  }
}
