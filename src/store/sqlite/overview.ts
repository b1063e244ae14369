import type { Database } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { OverviewStore } from "../overview.ts";
import { OVERVIEW_SQL, toCount, toCounts, toDeliveryTotals, toDisabledEndpoint } from "../overview-sql.ts";

/** Events counted per statement: events have no index by time, so they are counted in rowid ranges, yielding between. */
export const EVENT_CHUNK = 20_000;

type Row = Record<string, unknown>;

export class SqliteOverview implements OverviewStore {
  constructor(private readonly sqlite: Database) {}

  async eventsSince(times: number[]) {
    const range = this.sqlite
      .query<{ lo: number | null; hi: number | null }, []>("SELECT min(rowid) AS lo, max(rowid) AS hi FROM events")
      .get();
    const counts = times.map(() => 0);
    if (!range || range.lo === null || range.hi === null || times.length === 0) return counts;
    const n = times.length;
    const chunk = this.sqlite.query<Row, number[]>(
      OVERVIEW_SQL.eventsSince(n, `rowid >= $${n + 1} AND rowid < $${n + 2} AND received_at >= $${n + 3}`),
    );
    for (let at = range.lo; at <= range.hi; at += EVENT_CHUNK) {
      const found = toCounts(chunk.get(...times, at, at + EVENT_CHUNK, Math.min(...times)), n);
      for (let i = 0; i < n; i++) counts[i] = (counts[i] ?? 0) + (found[i] ?? 0);
      // Requests that came meanwhile are answered between chunks.
      if (at + EVENT_CHUNK <= range.hi) await nextTurn();
    }
    return counts;
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
}
