import type { Database } from "bun:sqlite";
import { automaticDisable } from "../audit.ts";
import { failureChange, noChange } from "../endpoint-health.ts";
import { hourCounts } from "../delivery-rows.ts";
import { LAST_SUCCESS_RESOLUTION_MS, type Completion, type EndpointChange } from "../queue.ts";
import type { AuditWriter } from "./audit.ts";
import type { SqliteEndpoints } from "./endpoints.ts";
import { statement } from "./open.ts";

type Health = {
  consecutive_failures: number;
  last_success_at: number | null;
  warned_at: number | null;
  enabled: number;
};

function prepare(sqlite: Database) {
  return {
    updateDelivery: statement(
      sqlite,
      `UPDATE deliveries SET status = $status, attempt_count = attempt_count + $attempted,
      next_attempt_at = $next, lease_until = NULL, parked_reason = $reason, payload_deleted = (payload_deleted OR $deletePayload),
      updated_at = $now WHERE id = $id AND lease_id = $leaseId`,
    ),
    dropEventBody: statement(
      sqlite,
      `UPDATE events SET body = NULL WHERE id = (SELECT event_id FROM deliveries WHERE id = $delivery)
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = 'pending')`,
    ),
    insertAttempt: statement(
      sqlite,
      `INSERT INTO attempts (delivery_id, number, at, status_code, error, response_excerpt, duration_ms)
      VALUES ($delivery, $number, $at, $status, $error, $excerpt, $duration)`,
    ),
    countHour: statement(
      sqlite,
      `INSERT INTO endpoint_hours (endpoint_id, hour, succeeded, failed, parked)
      VALUES ($endpoint, $hour, $succeeded, $failed, $parked)
      ON CONFLICT DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed,
        parked = parked + excluded.parked`,
    ),
    // Skipped while it would change nothing but move last_success_at by under a second: at
    // thousands of successes a second it would dirty the endpoint's page in every commit.
    success: statement(
      sqlite,
      `UPDATE endpoints SET consecutive_failures = 0, last_success_at = $now, warned_at = NULL WHERE id = $id
      AND (consecutive_failures <> 0 OR warned_at IS NOT NULL OR last_success_at IS NULL
        OR last_success_at <= $now - ${LAST_SUCCESS_RESOLUTION_MS})`,
    ),
    failure: statement<Health>(
      sqlite,
      `UPDATE endpoints SET consecutive_failures = consecutive_failures + 1 WHERE id = $id
      RETURNING consecutive_failures, last_success_at, warned_at, enabled`,
    ),
    warn: statement(sqlite, "UPDATE endpoints SET warned_at = $now WHERE id = $id"),
    disable: statement<{ account_id: string }>(
      sqlite,
      "UPDATE endpoints SET enabled = 0, disabled_reason = $reason, updated_at = $now WHERE id = $id RETURNING account_id",
    ),
  };
}

/** Records completions one at a time, each inside the queue's transaction of its turn. */
export class SqliteCompletions {
  private readonly stmt: ReturnType<typeof prepare>;

  constructor(
    sqlite: Database,
    private readonly endpoints: SqliteEndpoints,
    private readonly audit: AuditWriter,
  ) {
    this.stmt = prepare(sqlite);
  }

  record(c: Completion): EndpointChange {
    // The delivery went while its attempt ran (its endpoint was deleted, or retention purged it), or
    // its lease ran out and another claim holds it now: there is nothing to record this against,
    // nor an endpoint whose health it would change.
    if (!this.recorded(c)) return noChange();
    if (c.effect === "success") this.stmt.success.run({ id: c.endpointId, now: c.now });
    if (c.effect !== "failure" && c.effect !== "gone") return noChange();
    return this.failed(c, c.effect);
  }

  /** The delivery's next state, its attempt and its hourly counts; false when its lease is not held. */
  private recorded(c: Completion): boolean {
    const { attempt: a, next, now } = c;
    const updated = this.stmt.updateDelivery.run({
      id: c.deliveryId,
      leaseId: c.leaseId,
      status: next.status,
      attempted: a ? 1 : 0,
      next: next.status === "pending" ? next.nextAttemptAt : null,
      reason: next.status === "parked" ? next.reason : null,
      deletePayload: c.deletePayload ? 1 : 0,
      now,
    });
    if (updated.changes === 0) return false;
    if (c.deletePayload) this.stmt.dropEventBody.run({ delivery: c.deliveryId });
    if (a) {
      this.stmt.insertAttempt.run({
        delivery: c.deliveryId,
        number: a.number,
        at: a.at,
        status: a.statusCode,
        error: a.error,
        excerpt: a.responseExcerpt,
        duration: a.durationMs,
      });
    }
    for (const counts of hourCounts(c)) this.stmt.countHour.run({ endpoint: c.endpointId, ...counts });
    return true;
  }

  /** A failure's change of its endpoint's health: a warning, or a disable with its audit entry. */
  private failed(c: Completion, effect: "failure" | "gone"): EndpointChange {
    const { now } = c;
    const health = this.stmt.failure.get({ id: c.endpointId });
    if (!health) return noChange();
    const change = failureChange(
      {
        consecutiveFailures: health.consecutive_failures,
        lastSuccessAt: health.last_success_at,
        warnedAt: health.warned_at,
        enabled: health.enabled === 1,
      },
      effect,
      now,
      c.rules,
    );
    if (change.disabled) {
      const row = this.stmt.disable.get({ id: c.endpointId, reason: change.disabled, now });
      if (row)
        this.audit.record(automaticDisable({ id: c.endpointId, accountId: row.account_id }, change.disabled, now, c));
      this.endpoints.forget(c.endpointId);
    }
    if (change.warned) this.stmt.warn.run({ id: c.endpointId, now });
    return change;
  }
}
