import type { SQL } from "bun";
import type { OverviewStore } from "../overview.ts";
import { OVERVIEW_SQL, toCount, toCounts, toDeliveryTotals, toDisabledEndpoint } from "../overview-sql.ts";

type Row = Record<string, unknown>;

export class PgOverview implements OverviewStore {
  constructor(private readonly sql: SQL) {}

  private async rows(text: string, params: unknown[]): Promise<Row[]> {
    return (await this.sql.unsafe(text, params)) as Row[];
  }

  async eventsSince(times: number[]) {
    if (times.length === 0) return [];
    return toCounts((await this.rows(OVERVIEW_SQL.eventsSince(times.length), times))[0], times.length);
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
