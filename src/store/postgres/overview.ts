import type { SQL } from "bun";
import type { EventHour, OverviewStore } from "../overview.ts";
import { OVERVIEW_SQL, toCount, toDeliveryTotals, toDisabledEndpoint, toEventCounts } from "../overview-sql.ts";

type Row = Record<string, unknown>;

export class PgOverview implements OverviewStore {
  constructor(private readonly sql: SQL) {}

  private async rows(text: string, params: unknown[]): Promise<Row[]> {
    return (await this.sql.unsafe(text, params)) as Row[];
  }

  async addEventCounts(counts: EventHour[]) {
    if (counts.length === 0) return;
    await this.sql.begin(async (tx) => {
      for (const c of counts) await tx.unsafe(OVERVIEW_SQL.addEventCounts, [c.hour, c.received, c.unrouted]);
    });
  }
  async eventsSince(hours: number[]) {
    if (hours.length === 0) return [];
    return toEventCounts((await this.rows(OVERVIEW_SQL.eventsSince(hours.length), hours))[0], hours.length);
  }
  async deliveriesSince(since: number) {
    return toDeliveryTotals((await this.rows(OVERVIEW_SQL.deliveriesSince, [since]))[0]);
  }
  async failingEndpoints() {
    return toCount((await this.rows(OVERVIEW_SQL.failingEndpoints, []))[0]);
  }
  async disabledSince(since: number, limit: number) {
    return (await this.rows(OVERVIEW_SQL.disabledSince, [since, limit])).map(toDisabledEndpoint);
  }
}
