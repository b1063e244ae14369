import type { Database } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { OverviewStore } from "../overview.ts";
import {
  OVERVIEW_SQL,
  toCallTotal,
  toCount,
  toDailyUsage,
  toDeliveryTotals,
  toDisabledEndpoint,
} from "../overview-sql.ts";

/** Events counted per statement: events have no index by time, so they are counted in rowid ranges, yielding between. */
export const EVENT_CHUNK = 20_000;

type Row = Record<string, unknown>;

export class SqliteOverview implements OverviewStore {
  constructor(private readonly sqlite: Database) {}

  async eventsSince(since: number) {
    const range = this.sqlite.query<{ lo: number | null; hi: number | null }, []>(
      "SELECT min(rowid) AS lo, max(rowid) AS hi FROM events",
    );
    const chunk = this.sqlite.query<Row, [number, number, number]>(
      "SELECT count(*) AS n FROM events WHERE rowid >= $1 AND rowid < $2 AND received_at >= $3",
    );
    const { lo, hi } = range.get() ?? { lo: null, hi: null };
    let count = 0;
    if (lo === null || hi === null) return 0;
    for (let at = lo; at <= hi; at += EVENT_CHUNK) {
      count += toCount(chunk.get(at, at + EVENT_CHUNK, since));
      // Requests that came meanwhile are answered between chunks.
      if (at + EVENT_CHUNK <= hi) await nextTurn();
    }
    return count;
  }
  async deliveriesSince(since: number) {
    return toDeliveryTotals(this.sqlite.query<Row, [number]>(OVERVIEW_SQL.deliveriesSince).get(since) ?? undefined);
  }
  async failingEndpoints() {
    return toCount(this.sqlite.query<Row, []>(OVERVIEW_SQL.failingEndpoints).get());
  }
  async disabledSince(since: number, limit: number) {
    return this.sqlite
      .query<Row, [number, number]>(OVERVIEW_SQL.disabledSince)
      .all(since, limit)
      .map(toDisabledEndpoint);
  }
  async callTotals(from: number, to: number) {
    return this.sqlite.query<Row, [number, number]>(OVERVIEW_SQL.callTotals).all(from, to).map(toCallTotal);
  }
  async usageByDay(accountId: string | null, from: number, to: number) {
    const rows =
      accountId === null
        ? this.sqlite.query<Row, [number, number]>(OVERVIEW_SQL.usageByDay(false)).all(from, to)
        : this.sqlite.query<Row, [number, number, string]>(OVERVIEW_SQL.usageByDay(true)).all(from, to, accountId);
    return rows.map(toDailyUsage);
  }
}
