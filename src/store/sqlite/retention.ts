import { inArray, type SQL } from "drizzle-orm";
import { inBatches } from "../batches.ts";
import { HOUR } from "../hours.ts";
import { OPERATOR_ACTORS_SQL } from "../audit.ts";
import { expiryConditions, NO_SEALED_SECRETS } from "../onboarding-rows.ts";
import type { RetentionStore } from "../retention.ts";
import type { Retention } from "../types.ts";
import type { Removed, SqliteDeletions } from "./deletions.ts";
import { statement, type Db } from "./open.ts";
import { onboardings } from "./schema.ts";

type Window = { now: number; day: number; week: number };
type Batch = { batch: number };

/** When a row of an account (`a`) expires: its time must be at least this. */
const EXPIRY = "$now - CASE a.retention WHEN '7d' THEN $week ELSE $day END";

function prepare(db: Db) {
  const sqlite = db.$client;
  return {
    // Endpoint by endpoint (CROSS JOIN keeps that order), so each reads only its expired range.
    deliveries: statement<{ event_id: string }, Window & Batch>(
      sqlite,
      `DELETE FROM deliveries WHERE rowid IN (
      SELECT d.rowid FROM accounts a CROSS JOIN endpoints p ON p.account_id = a.id CROSS JOIN deliveries d ON d.endpoint_id = p.id
      WHERE d.created_at < ${EXPIRY} LIMIT $batch) RETURNING event_id`,
    ),
    // An hour goes once all of it is past the account's retention.
    hours: statement<unknown, Window>(
      sqlite,
      `DELETE FROM endpoint_hours WHERE (endpoint_id, hour) IN (
      SELECT h.endpoint_id, h.hour FROM accounts a CROSS JOIN endpoints p ON p.account_id = a.id
        CROSS JOIN endpoint_hours h ON h.endpoint_id = p.id
      WHERE h.hour + ${HOUR} <= ${EXPIRY})`,
    ),
    sessions: statement<unknown, { now: number } & Batch>(
      sqlite,
      `DELETE FROM sessions WHERE token_hash IN (
      SELECT token_hash FROM sessions WHERE expires_at <= $now LIMIT $batch)`,
    ),
    signIns: statement<unknown, { before: number } & Batch>(
      sqlite,
      "DELETE FROM sign_in_counts WHERE key IN (SELECT key FROM sign_in_counts WHERE since < $before LIMIT $batch)",
    ),
    operatorSessions: statement<unknown, { now: number } & Batch>(
      sqlite,
      `DELETE FROM operator_sessions WHERE token_hash IN (
      SELECT token_hash FROM operator_sessions WHERE expires_at <= $now LIMIT $batch)`,
    ),
    eventCounts: statement<unknown, { before: number } & Batch>(
      sqlite,
      "DELETE FROM event_hours WHERE hour IN (SELECT hour FROM event_hours WHERE hour < $before LIMIT $batch)",
    ),
    audit: statement<unknown, { before: number } & Batch>(
      sqlite,
      "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $before LIMIT $batch)",
    ),
    // Account by account (CROSS JOIN keeps that order), each reading only its expired range.
    accountAudit: statement<unknown, Window & Batch>(
      sqlite,
      `DELETE FROM audit_log WHERE id IN (
      SELECT l.id FROM accounts a CROSS JOIN audit_log l ON l.account_id = a.id
      WHERE l.at < ${EXPIRY} AND l.actor_kind NOT IN (${OPERATOR_ACTORS_SQL}) LIMIT $batch)`,
    ),
    recoveries: statement<unknown, Window & Batch>(
      sqlite,
      `DELETE FROM recoveries WHERE id IN (
      SELECT r.id FROM accounts a CROSS JOIN recoveries r ON r.account_id = a.id
      WHERE r.status = 'done' AND r.updated_at < ${EXPIRY} LIMIT $batch)`,
    ),
  };
}

export class SqliteRetention implements RetentionStore {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly purgeBatch: (params: Window & Batch) => Removed;

  constructor(
    private readonly db: Db,
    private readonly deletions: SqliteDeletions,
  ) {
    this.stmt = prepare(db);
    this.purgeBatch = deletions.batch(this.stmt.deliveries);
  }

  async purgeWebhookHistory(now: number, retentionMs: Record<Retention, number>, batch: number) {
    const window = { now, day: retentionMs["24h"], week: retentionMs["7d"] };
    const removed = await this.deletions.inBatches(batch, () => this.purgeBatch({ ...window, batch }));
    this.stmt.hours.run(window);
    return removed;
  }

  purgeSessions(now: number, batch: number) {
    return inBatches(batch, () => this.stmt.sessions.run({ now, batch }).changes);
  }

  purgeSignInCounts(before: number, batch: number) {
    return inBatches(batch, () => this.stmt.signIns.run({ before, batch }).changes);
  }

  purgeOperatorSessions(now: number, batch: number) {
    return inBatches(batch, () => this.stmt.operatorSessions.run({ now, batch }).changes);
  }

  async purgeOnboardings(now: number, batch: number) {
    const { deleting, dropping } = expiryConditions(onboardings, now);
    const some = (where: SQL | undefined) =>
      inArray(onboardings.id, this.db.select({ id: onboardings.id }).from(onboardings).where(where).limit(batch));
    const id = { id: onboardings.id };
    const deleted = await inBatches(
      batch,
      () => this.db.delete(onboardings).where(some(deleting)).returning(id).all().length,
    );
    const dropped = await inBatches(
      batch,
      () => this.db.update(onboardings).set(NO_SEALED_SECRETS).where(some(dropping)).returning(id).all().length,
    );
    return deleted + dropped;
  }

  purgeRecoveries(now: number, retentionMs: Record<Retention, number>, batch: number) {
    const window = { now, day: retentionMs["24h"], week: retentionMs["7d"], batch };
    return inBatches(batch, () => this.stmt.recoveries.run(window).changes);
  }

  purgeEventCounts(before: number, batch: number) {
    return inBatches(batch, () => this.stmt.eventCounts.run({ before, batch }).changes);
  }

  async purgeAudit(before: number, now: number, keptMs: Record<Retention, number>, batch: number) {
    const window = { now, day: keptMs["24h"], week: keptMs["7d"], batch };
    const accounts = await inBatches(batch, () => this.stmt.accountAudit.run(window).changes);
    return accounts + (await inBatches(batch, () => this.stmt.audit.run({ before, batch }).changes));
  }
}
