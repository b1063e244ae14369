import type { SQL } from "bun";
import { automaticDisable, type AuditEntry } from "../audit.ts";
import { typedParams } from "./connect.ts";
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
 * 1. one statement (the switchboard_complete function): the slots the leases held, freed (fenced on
 *    each lease id), the deliveries' next states, their attempt rows, the hourly counters, and the
 *    health of endpoints that only succeeded in the batch;
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
  const isApplied = await completeAll(tx, inputs, failing);
  await dropPayloads(
    tx,
    inputs.filter((c) => c.deletePayload && isApplied(c)).map((c) => c.deliveryId),
  );
  if (failing.size === 0) return { changes, disabled: [] };
  const failures = [...failing].sort().map((id) => ({
    id,
    completions: (byEndpoint.get(id) ?? []).filter(({ c }) => isApplied(c)),
  }));
  const disabled = await applyFailures(tx, failures, changes);
  return { changes, disabled };
}

/**
 * Step 1 of recordCompletions: the switchboard_complete function, given the endpoints with a
 * failure in the batch (whose health step 3 applies). Returns whether a completion was applied: a
 * delivery that went while its attempt ran, or whose lease another claim holds now, gets nothing
 * recorded, and changes no endpoint.
 */
async function completeAll(tx: Tx, inputs: Completion[], failing: Set<string>) {
  const successes = inputs.filter((c) => c.effect === "success" && !failing.has(c.endpointId));
  const hours = hourRows(inputs);
  const appliedRows = (await tx.unsafe(
    `SELECT * FROM switchboard_complete(${typedParams(
      "text[] text[] text[] text[] int[] bigint[] text[] bool[] bigint[]",
      "text[] text[] int[] bigint[] int[] text[] text[] int[]",
      "text[] text[] bigint[] int[] int[] int[]",
      "text[] text[] bigint[] bigint",
    )})`,
    [
      inputs.map((c) => c.deliveryId),
      inputs.map((c) => c.leaseId),
      inputs.map((c) => c.endpointId),
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
      LAST_SUCCESS_RESOLUTION_MS,
    ],
  )) as { id: string; lease_id: string }[];
  const applied = new Set(appliedRows.map((row) => `${row.id} ${row.lease_id}`));
  return (c: Completion) => applied.has(`${c.deliveryId} ${c.leaseId}`);
}

/** Step 2: the payloads of these deliveries' events, dropped once no pending delivery needs them. */
async function dropPayloads(tx: Tx, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await tx.unsafe(
    `UPDATE events SET body = NULL WHERE id IN (SELECT event_id FROM deliveries WHERE id = ANY($1::text[]))
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = 'pending')`,
    [deliveryIds],
  );
}

/**
 * Step 3: the endpoints with a failure (in id order), each with its applied completions that
 * touch its health in batch order, locked and changed; sets their EndpointChange in `changes` and
 * returns the endpoints disabled.
 */
async function applyFailures(
  tx: Tx,
  failures: { id: string; completions: { c: Completion; i: number }[] }[],
  changes: EndpointChange[],
): Promise<string[]> {
  const healthRows = (await tx.unsafe(
    `SELECT id, account_id, consecutive_failures, last_success_at, warned_at, enabled, disabled_reason, updated_at
    FROM endpoints WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
    [failures.map((f) => f.id)],
  )) as Record<string, unknown>[];
  const completionsOf = new Map(failures.map((f) => [f.id, f.completions]));
  const updated: (Health & { id: string })[] = [];
  const entries: AuditEntry[] = [];
  const disabled: string[] = [];
  for (const row of healthRows) {
    const health = toHealth(row);
    for (const { c, i } of completionsOf.get(health.id) ?? []) {
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
  await writeHealth(tx, updated);
  for (const entry of entries) await recordAudit(tx, entry);
  return disabled;
}

function toHealth(row: Record<string, unknown>): Health & { id: string } {
  return {
    id: row.id as string,
    consecutiveFailures: row.consecutive_failures as number,
    lastSuccessAt: row.last_success_at === null ? null : Number(row.last_success_at),
    warnedAt: row.warned_at === null ? null : Number(row.warned_at),
    enabled: row.enabled as boolean,
    disabledReason: row.disabled_reason as string | null,
    updatedAt: Number(row.updated_at),
  };
}

async function writeHealth(tx: Tx, updated: (Health & { id: string })[]): Promise<void> {
  if (updated.length === 0) return;
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
