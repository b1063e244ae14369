import type { SQL } from "bun";
import { HOUR } from "../hours.ts";
import type { RetentionStore } from "../retention.ts";
import type { Retention } from "../types.ts";
import { DELETE_BATCH, type PgDeletions } from "./deletions.ts";

export class PgRetention implements RetentionStore {
  constructor(
    private readonly sql: SQL,
    private readonly deletions: PgDeletions,
  ) {}

  /**
   * In batches, each its own short transaction under an advisory lock: when every instance runs
   * it, one purges and the others find the lock taken and stop.
   */
  async purgeWebhookHistory(now: number, retentionMs: Record<Retention, number>) {
    const removed = { deliveries: 0, events: 0 };
    const expiry = "$1::bigint - CASE a.retention WHEN '7d' THEN $3::bigint ELSE $2::bigint END";
    const params = [now, retentionMs["24h"], retentionMs["7d"]];
    for (;;) {
      const batch = await this.deletions.batch(
        `SELECT d.id FROM accounts a JOIN endpoints p ON p.account_id = a.id
        JOIN deliveries d ON d.endpoint_id = p.id WHERE d.created_at < ${expiry} LIMIT ${DELETE_BATCH}`,
        params,
        true,
      );
      if (batch === null) return removed;
      removed.deliveries += batch.deliveries;
      removed.events += batch.events;
      if (batch.deliveries < DELETE_BATCH) break;
    }
    // An hour goes once all of it is past the account's retention.
    await this.sql.unsafe(
      `DELETE FROM endpoint_hours h USING endpoints p, accounts a
      WHERE h.endpoint_id = p.id AND p.account_id = a.id AND h.hour + ${HOUR} <= ${expiry}`,
      params,
    );
    return removed;
  }
}
