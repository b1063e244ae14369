import type { Endpoint } from "../../src/store/endpoints.ts";
import type { Completion, NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { FAILURE_RULES } from "../../src/webhooks/outcome.ts";
import { testBackend } from "./backend.ts";

// Rows the webhook store takes, for tests that write to it directly (as a run that stopped
// leaves its queue, or to drive one store call at a time).

/**
 * A query counting (as `n`) the deliveries a lease holds, live or run out, on the test backend:
 * SQLite keeps a lease in the delivery's row, PostgreSQL in its endpoint's slots.
 */
export const LEASED_COUNT =
  testBackend() === "postgres"
    ? "SELECT COUNT(*) AS n FROM endpoint_slots WHERE delivery_id IS NOT NULL"
    : "SELECT COUNT(*) AS n FROM deliveries WHERE lease_until IS NOT NULL";

/** An enabled, healthy endpoint for `messages`, with a fixed secret. */
export function endpointRow(id: string, accountId: string, now: number): Endpoint {
  return {
    id,
    accountId,
    url: `https://receiver.example/${id}`,
    fields: ["messages"],
    phoneNumberId: null,
    secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0",
    previousSecret: null,
    previousSecretExpiresAt: null,
    signature: "standard",
    verifyToken: null,
    enabled: true,
    disabledReason: null,
    consecutiveFailures: 0,
    lastSuccessAt: null,
    warnedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A `messages` event received at `at`, of `body` (an empty JSON object unless given). */
export function eventRow(id: string, accountId: string, at: number, body = new TextEncoder().encode("{}")): NewEvent {
  return { id, accountId, receivedAt: at, body, upstreamSignature: null, fields: ["messages"], isTest: false };
}

/** The lease id deliveryRow's leased rows are stored under, which firstAttempt names by default. */
export const TEST_LEASE = "lease_test";

/** A first delivery of `eventId`, due at `at`; leased to this process (TEST_LEASE) until `leaseUntil` when given. */
export function deliveryRow(
  id: string,
  event: Pick<NewEvent, "id" | "accountId">,
  endpointId: string,
  at: number,
  leaseUntil?: number,
): NewDelivery {
  const lease = leaseUntil === undefined ? undefined : { id: TEST_LEASE, until: leaseUntil };
  return {
    id,
    accountId: event.accountId,
    endpointId,
    eventId: event.id,
    nextAttemptAt: at,
    replayOf: null,
    signature: "standard",
    createdAt: at,
    lease,
  };
}

/** The record of a delivery's first attempt, answered `statusCode` at `at`; a success unless `result` says otherwise. */
export function firstAttempt(
  deliveryId: string,
  endpointId: string,
  at: number,
  statusCode = 200,
  result: Pick<Completion, "next" | "effect"> = { next: { status: "succeeded" }, effect: "success" },
  leaseId = TEST_LEASE,
): Completion {
  return {
    deliveryId,
    leaseId,
    endpointId,
    now: at,
    rules: FAILURE_RULES,
    deletePayload: false,
    attempt: { number: 1, at, statusCode, error: null, responseExcerpt: "", durationMs: 1 },
    ...result,
  };
}
