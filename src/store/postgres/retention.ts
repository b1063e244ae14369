import { and, inArray, type SQL } from "drizzle-orm";
import { inBatches } from "../batches.ts";
import { HOUR } from "../hours.ts";
import { OPERATOR_ACTORS_SQL } from "../audit.ts";
import { expiryConditions, NO_SEALED_SECRETS } from "../onboarding-rows.ts";
import type { RetentionStore } from "../retention.ts";
import type { Retention } from "../types.ts";
import type { PgDb } from "./connect.ts";
import type { PgDeletions } from "./deletions.ts";
import { onboardings } from "./schema.ts";

/** When a row of an account (`a`) expires: its time must be at least this ($1 now, $2 a day's retention, $3 a week's). */
const EXPIRY = "$1::bigint - CASE a.retention WHEN '7d' THEN $3::bigint ELSE $2::bigint END";

/**
 * Every statement is idempotent, so instances that purge at once each delete what is left; only
 * the webhook history's batches take a lock (see purgeWebhookHistory).
 */
export class PgRetention implements RetentionStore {
  constructor(
    private readonly db: PgDb,
    private readonly deletions: PgDeletions,
  ) {}

  /** Rows `statement` deleted, run until a run deletes fewer than `batch` ($n: the last parameter). */
  private deleted(statement: string, params: unknown[], batch: number): Promise<number> {
    return inBatches(batch, async () => (await this.db.$client.unsafe(statement, [...params, batch])).count);
  }

  /**
   * In batches, each its own short transaction under an advisory lock: when every instance runs
   * it, one purges and the others find the lock taken and stop.
   */
  async purgeWebhookHistory(now: number, retentionMs: Record<Retention, number>, batch: number) {
    const params = [now, retentionMs["24h"], retentionMs["7d"]];
    let events = 0;
    const deliveries = await inBatches(batch, async () => {
      const removed = await this.deletions.batch(
        `SELECT d.id FROM accounts a JOIN endpoints p ON p.account_id = a.id
        JOIN deliveries d ON d.endpoint_id = p.id WHERE d.created_at < ${EXPIRY} LIMIT $4`,
        [...params, batch],
        true,
      );
      events += removed?.events ?? 0;
      return removed?.deliveries ?? 0;
    });
    // An hour goes once all of it is past the account's retention.
    await this.db.$client.unsafe(
      `DELETE FROM endpoint_hours h USING endpoints p, accounts a
      WHERE h.endpoint_id = p.id AND p.account_id = a.id AND h.hour + ${HOUR} <= ${EXPIRY}`,
      params,
    );
    // Due rows whose delivery is gone or done: left only by an instance of a release before
    // due_deliveries, or by a cascade; the claim skips them, and this keeps the table and the
    // pending count true. A delivery and its due row are written in one statement, so a
    // delivery being enqueued is never caught between the two.
    await this.db.$client.unsafe(
      `DELETE FROM due_deliveries w
      WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = w.delivery_id AND d.status = 'pending')`,
    );
    return { deliveries, events };
  }

  purgeSessions(now: number, batch: number) {
    return this.deleted(
      "DELETE FROM sessions WHERE token_hash IN (SELECT token_hash FROM sessions WHERE expires_at <= $1 LIMIT $2)",
      [now],
      batch,
    );
  }

  purgeSignInCounts(before: number, batch: number) {
    return this.deleted(
      "DELETE FROM sign_in_counts WHERE key IN (SELECT key FROM sign_in_counts WHERE since < $1 LIMIT $2)",
      [before],
      batch,
    );
  }

  purgeOperatorSessions(now: number, batch: number) {
    return this.deleted(
      `DELETE FROM operator_sessions WHERE token_hash IN (
      SELECT token_hash FROM operator_sessions WHERE expires_at <= $1 LIMIT $2)`,
      [now],
      batch,
    );
  }

  purgeEventCounts(before: number, batch: number) {
    return this.deleted(
      "DELETE FROM event_hours WHERE hour IN (SELECT hour FROM event_hours WHERE hour < $1 LIMIT $2)",
      [before],
      batch,
    );
  }

  async purgeAudit(before: number, now: number, keptMs: Record<Retention, number>, batch: number) {
    const accounts = await this.deleted(
      `DELETE FROM audit_log WHERE id IN (SELECT l.id FROM accounts a JOIN audit_log l ON l.account_id = a.id
      WHERE l.at < ${EXPIRY} AND l.actor_kind NOT IN (${OPERATOR_ACTORS_SQL}) LIMIT $4)`,
      [now, keptMs["24h"], keptMs["7d"]],
      batch,
    );
    const old = await this.deleted(
      "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 LIMIT $2)",
      [before],
      batch,
    );
    return accounts + old;
  }

  async purgeOnboardings(now: number, batch: number) {
    const { deleting, dropping } = expiryConditions(onboardings, now);
    const some = (where: SQL | undefined) =>
      inArray(onboardings.id, this.db.select({ id: onboardings.id }).from(onboardings).where(where).limit(batch));
    const changed = async (rows: Promise<unknown[]>) => (await rows).length;
    const deleted = await inBatches(batch, () =>
      changed(this.db.delete(onboardings).where(some(deleting)).returning({ id: onboardings.id })),
    );
    const dropped = await inBatches(batch, () =>
      changed(
        // The condition again on the row itself: an instance that waited for another's update
        // re-reads the row, not the sub-select, and must not count it twice.
        this.db
          .update(onboardings)
          .set(NO_SEALED_SECRETS)
          .where(and(dropping, some(dropping)))
          .returning({ id: onboardings.id }),
      ),
    );
    return deleted + dropped;
  }

  purgeRecoveries(now: number, retentionMs: Record<Retention, number>, batch: number) {
    return this.deleted(
      `DELETE FROM recoveries WHERE id IN (SELECT r.id FROM accounts a JOIN recoveries r ON r.account_id = a.id
      WHERE r.status = 'done' AND r.updated_at < ${EXPIRY} LIMIT $4)`,
      [now, retentionMs["24h"], retentionMs["7d"]],
      batch,
    );
  }
}
