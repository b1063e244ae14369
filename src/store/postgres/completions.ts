import type { SQL } from "bun";
import { automaticDisable, type AuditEntry } from "../audit.ts";
import { hourCounts } from "../delivery-rows.ts";
import { failureChange, noChange, type FailingHealth } from "../endpoint-health.ts";
import { recordAudit } from "./audit.ts";
import {
  LAST_SUCCESS_RESOLUTION_MS,
  type Completion,
  type EndpointChange,
  type EndpointEffect,
  type FailureRules,
} from "../queue.ts";

type Tx = Pick<SQL, "unsafe">;

/** The health columns of an endpoint, as completions change them (docs/webhooks.md#endpoint-health-and-disabling). */
interface Health extends FailingHealth {
  disabledReason: string | null;
  updatedAt: number;
}

/** What one attempt's outcome does to its endpoint's health, exactly as SQLite applies it one at a time. */
function applyEffect(health: Health, effect: EndpointEffect, now: number, rules: FailureRules): EndpointChange {
  if (effect === "success") {
    if (
      health.consecutiveFailures !== 0 ||
      health.warnedAt !== null ||
      health.lastSuccessAt === null ||
      health.lastSuccessAt <= now - LAST_SUCCESS_RESOLUTION_MS
    ) {
      Object.assign(health, { consecutiveFailures: 0, lastSuccessAt: now, warnedAt: null });
    }
    return noChange();
  }
  if (effect === "none") return noChange();
  health.consecutiveFailures++;
  const change = failureChange(health, effect, now, rules);
  if (change.disabled) Object.assign(health, { enabled: false, disabledReason: change.disabled, updatedAt: now });
  if (change.warned) health.warnedAt = now;
  return change;
}

/** Whether the batch needs more than its one statement (recordCompletions' steps 2 and 3), and so a transaction. */
export function needsTransaction(inputs: Completion[]): boolean {
  return inputs.some((c) => c.deletePayload || c.effect === "failure" || c.effect === "gone");
}

/**
 * Records a batch of completions, in ONE statement when it holds only successes and retries (the
 * common case: one round trip, committed on its own), else in the transaction `tx`:
 * 1. one statement: the deliveries' next states (fenced on each lease id), their attempt rows, the
 *    hourly counters, and the health of endpoints that only succeeded in the batch;
 * 2. the payloads to drop (history), once no pending delivery needs them;
 * 3. endpoints with a failure in the batch: locked (in id order, so two batches never wait on each
 *    other in a cycle) and their completions applied in order, as SQLite applies them, with the
 *    audit entry of each disable.
 * Returns each input's EndpointChange, and the endpoints it disabled.
 */
export async function recordCompletions(
  tx: Tx,
  inputs: Completion[],
): Promise<{ changes: EndpointChange[]; disabled: string[] }> {
  const changes = inputs.map(noChange);
  // Per endpoint, its completions that touch its health, in batch order.
  const byEndpoint = new Map<string, { c: Completion; i: number }[]>();
  inputs.forEach((c, i) => {
    if (c.effect === "none") return;
    const list = byEndpoint.get(c.endpointId) ?? [];
    list.push({ c, i });
    byEndpoint.set(c.endpointId, list);
  });
  const failing = new Set(
    [...byEndpoint].filter(([, list]) => list.some(({ c }) => c.effect !== "success")).map(([id]) => id),
  );
  const successes = inputs.filter((c) => c.effect === "success" && !failing.has(c.endpointId));
  const hours = hourRows(inputs);
  const appliedRows = (await tx.unsafe(
    `WITH u AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[], $7::bool[], $8::bigint[])
        AS u(id, lease_id, status, attempted, next, reason, drop_payload, now)
    ), done AS (
      UPDATE deliveries d SET status = u.status, attempt_count = d.attempt_count + u.attempted, next_attempt_at = u.next,
        lease_until = NULL, parked_reason = u.reason, payload_deleted = d.payload_deleted OR u.drop_payload, updated_at = u.now
      FROM u WHERE d.id = u.id AND d.lease_id = u.lease_id
      RETURNING d.id, d.lease_id, d.endpoint_id
    ), recorded AS (
      INSERT INTO attempts (delivery_id, number, at, status_code, error, response_excerpt, duration_ms)
      SELECT a.delivery_id, a.number, a.at, a.status_code, a.error, a.response_excerpt, a.duration_ms
      FROM unnest($9::text[], $10::text[], $11::int[], $12::bigint[], $13::int[], $14::text[], $15::text[], $16::int[])
        AS a(delivery_id, lease_id, number, at, status_code, error, response_excerpt, duration_ms)
      WHERE (a.delivery_id, a.lease_id) IN (SELECT id, lease_id FROM done)
    ), counted AS (
      INSERT INTO endpoint_hours (endpoint_id, hour, succeeded, failed, parked)
      SELECT done.endpoint_id, h.hour, sum(h.succeeded)::int, sum(h.failed)::int, sum(h.parked)::int
      FROM unnest($17::text[], $18::text[], $19::bigint[], $20::int[], $21::int[], $22::int[]) AS h(delivery_id, lease_id, hour, succeeded, failed, parked)
      JOIN done ON done.id = h.delivery_id AND done.lease_id = h.lease_id
      GROUP BY done.endpoint_id, h.hour ORDER BY done.endpoint_id, h.hour
      ON CONFLICT (endpoint_id, hour) DO UPDATE SET succeeded = endpoint_hours.succeeded + excluded.succeeded,
        failed = endpoint_hours.failed + excluded.failed, parked = endpoint_hours.parked + excluded.parked
    ), healthy AS (
      UPDATE endpoints e SET consecutive_failures = 0, last_success_at = x.at, warned_at = NULL
      FROM (
        SELECT done.endpoint_id, max(s.at) AS at FROM unnest($23::text[], $24::text[], $25::bigint[]) AS s(delivery_id, lease_id, at)
        JOIN done ON done.id = s.delivery_id AND done.lease_id = s.lease_id GROUP BY done.endpoint_id
      ) x
      WHERE e.id = x.endpoint_id AND (e.consecutive_failures <> 0 OR e.warned_at IS NOT NULL OR e.last_success_at IS NULL
        OR e.last_success_at <= x.at - ${LAST_SUCCESS_RESOLUTION_MS})
    )
    SELECT id, lease_id FROM done`,
    [
      inputs.map((c) => c.deliveryId),
      inputs.map((c) => c.leaseId),
      inputs.map((c) => c.next.status),
      inputs.map((c) => (c.attempt ? 1 : 0)),
      inputs.map((c) => (c.next.status === "pending" ? c.next.nextAttemptAt : null)),
      inputs.map((c) => (c.next.status === "parked" ? c.next.reason : null)),
      inputs.map((c) => c.deletePayload),
      inputs.map((c) => c.now),
      ...attemptColumns(inputs),
      hours.map((h) => h.deliveryId),
      hours.map((h) => h.leaseId),
      hours.map((h) => h.hour),
      hours.map((h) => h.succeeded),
      hours.map((h) => h.failed),
      hours.map((h) => h.parked),
      successes.map((c) => c.deliveryId),
      successes.map((c) => c.leaseId),
      successes.map((c) => c.now),
    ],
  )) as { id: string; lease_id: string }[];
  const applied = new Set(appliedRows.map((row) => `${row.id} ${row.lease_id}`));
  // A delivery that went while its attempt ran, or whose lease another claim holds now, gets
  // nothing recorded, and changes no endpoint.
  const isApplied = (c: Completion) => applied.has(`${c.deliveryId} ${c.leaseId}`);

  const dropping = inputs.filter((c) => c.deletePayload && isApplied(c)).map((c) => c.deliveryId);
  if (dropping.length > 0) {
    await tx.unsafe(
      `UPDATE events SET body = NULL WHERE id IN (SELECT event_id FROM deliveries WHERE id = ANY($1::text[]))
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = 'pending')`,
      [dropping],
    );
  }
  const disabled: string[] = [];
  if (failing.size === 0) return { changes, disabled };
  const healthRows = (await tx.unsafe(
    `SELECT id, account_id, consecutive_failures, last_success_at, warned_at, enabled, disabled_reason, updated_at
    FROM endpoints WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
    [[...failing].sort()],
  )) as Record<string, unknown>[];
  const updated: (Health & { id: string })[] = [];
  const entries: AuditEntry[] = [];
  for (const row of healthRows) {
    const health: Health & { id: string } = {
      id: row.id as string,
      consecutiveFailures: row.consecutive_failures as number,
      lastSuccessAt: row.last_success_at === null ? null : Number(row.last_success_at),
      warnedAt: row.warned_at === null ? null : Number(row.warned_at),
      enabled: row.enabled as boolean,
      disabledReason: row.disabled_reason as string | null,
      updatedAt: Number(row.updated_at),
    };
    for (const { c, i } of byEndpoint.get(health.id) ?? []) {
      if (!isApplied(c)) continue;
      const change = applyEffect(health, c.effect, c.now, c.rules);
      changes[i] = change;
      if (change.disabled)
        entries.push(
          automaticDisable({ id: health.id, accountId: row.account_id as string }, change.disabled, c.now, c),
        );
    }
    if (!health.enabled && row.enabled) disabled.push(health.id);
    updated.push(health);
  }
  if (updated.length === 0) return { changes, disabled };
  await tx.unsafe(
    `UPDATE endpoints e SET consecutive_failures = u.failures, last_success_at = u.last_success, warned_at = u.warned,
      enabled = u.enabled, disabled_reason = u.reason, updated_at = u.updated
    FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[], $5::bool[], $6::text[], $7::bigint[])
      AS u(id, failures, last_success, warned, enabled, reason, updated)
    WHERE e.id = u.id`,
    [
      updated.map((h) => h.id),
      updated.map((h) => h.consecutiveFailures),
      updated.map((h) => h.lastSuccessAt),
      updated.map((h) => h.warnedAt),
      updated.map((h) => h.enabled),
      updated.map((h) => h.disabledReason),
      updated.map((h) => h.updatedAt),
    ],
  );
  for (const entry of entries) await recordAudit(tx, entry);
  return { changes, disabled };
}

/** The attempt rows' columns, for the completions that made an attempt. */
function attemptColumns(inputs: Completion[]): unknown[][] {
  const made = inputs.flatMap(({ deliveryId, leaseId, attempt }) =>
    attempt ? [{ deliveryId, leaseId, ...attempt }] : [],
  );
  return [
    made.map((a) => a.deliveryId),
    made.map((a) => a.leaseId),
    made.map((a) => a.number),
    made.map((a) => a.at),
    made.map((a) => a.statusCode),
    made.map((a) => a.error),
    made.map((a) => a.responseExcerpt),
    made.map((a) => a.durationMs),
  ];
}

/** The completions' hourly counts (see hourCounts), each with its delivery and lease: summed by the statement over those it applied. */
function hourRows(inputs: Completion[]) {
  return inputs.flatMap((c) =>
    hourCounts(c).map((counts) => ({ deliveryId: c.deliveryId, leaseId: c.leaseId, ...counts })),
  );
}
