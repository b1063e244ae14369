import type { Database } from "bun:sqlite";
import { HOUR } from "../hours.ts";
import type { RetentionStore } from "../retention.ts";
import type { Retention } from "../types.ts";
import { DELETE_BATCH, type Removed, type SqliteDeletions } from "./deletions.ts";
import { statement } from "./open.ts";

type Window = { now: number; day: number; week: number };

function prepare(sqlite: Database) {
  const expiry = "$now - CASE a.retention WHEN '7d' THEN $week ELSE $day END";
  return {
    // Endpoint by endpoint (CROSS JOIN keeps that order), so each reads only its expired range.
    deliveries: statement<{ event_id: string }, Window>(
      sqlite,
      `DELETE FROM deliveries WHERE rowid IN (
      SELECT d.rowid FROM accounts a CROSS JOIN endpoints p ON p.account_id = a.id CROSS JOIN deliveries d ON d.endpoint_id = p.id
      WHERE d.created_at < ${expiry} LIMIT ${DELETE_BATCH}) RETURNING event_id`,
    ),
    // An hour goes once all of it is past the account's retention.
    hours: statement<unknown, Window>(
      sqlite,
      `DELETE FROM endpoint_hours WHERE (endpoint_id, hour) IN (
      SELECT h.endpoint_id, h.hour FROM accounts a CROSS JOIN endpoints p ON p.account_id = a.id
        CROSS JOIN endpoint_hours h ON h.endpoint_id = p.id
      WHERE h.hour + ${HOUR} <= ${expiry})`,
    ),
  };
}

export class SqliteRetention implements RetentionStore {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly purgeBatch: (window: Window) => Removed;

  constructor(
    sqlite: Database,
    private readonly deletions: SqliteDeletions,
  ) {
    this.stmt = prepare(sqlite);
    this.purgeBatch = deletions.batch(this.stmt.deliveries);
  }

  async purgeWebhookHistory(now: number, retentionMs: Record<Retention, number>) {
    const window = { now, day: retentionMs["24h"], week: retentionMs["7d"] };
    const removed = await this.deletions.inBatches(() => this.purgeBatch(window));
    this.stmt.hours.run(window);
    return removed;
  }
}
