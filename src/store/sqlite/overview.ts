import type { Database } from "bun:sqlite";
import type { EventHour, OverviewStore } from "../overview.ts";
import { OVERVIEW_SQL, toCount, toDeliveryTotals, toDisabledEndpoint, toEventCounts } from "../overview-sql.ts";

type Row = Record<string, unknown>;

export class SqliteOverview implements OverviewStore {
  constructor(private readonly sqlite: Database) {}

  async addEventCounts(counts: EventHour[]) {
    const add = this.sqlite.query<unknown, [number, number, number]>(OVERVIEW_SQL.addEventCounts);
    this.sqlite.transaction(() => {
      for (const c of counts) add.run(c.hour, c.received, c.unrouted);
    })();
  }
  async eventsSince(hours: number[]) {
    if (hours.length === 0) return [];
    const row = this.sqlite.query<Row, number[]>(OVERVIEW_SQL.eventsSince(hours.length)).get(...hours);
    return toEventCounts(row, hours.length);
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
