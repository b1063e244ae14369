import { iso } from "../http/iso-time.ts";
import type { Endpoint } from "../store/endpoints.ts";
import type { Attempt, Delivery, HourlyStats } from "../store/history.ts";

/**
 * The JSON shapes of the webhook API (docs/operations.md#the-dashboard-and-its-api): snake_case, ISO times, never a
 * secret.
 */

export const endpointView = (e: Endpoint) => ({
  id: e.id,
  url: e.url,
  fields: e.fields,
  phone_number_id: e.phoneNumberId,
  signature: e.signature,
  /** The token itself is never shown: the account set it, and knows it. */
  verify_token_set: e.verifyToken !== null,
  enabled: e.enabled,
  disabled_reason: e.disabledReason,
  consecutive_failures: e.consecutiveFailures,
  last_success_at: iso(e.lastSuccessAt),
  /** While set, deliveries carry a second signature made with the previous secret. */
  previous_secret_expires_at: e.previousSecret !== null ? iso(e.previousSecretExpiresAt) : null,
  created_at: iso(e.createdAt),
  updated_at: iso(e.updatedAt),
});

export const deliveryView = (d: Delivery) => ({
  id: d.id,
  endpoint_id: d.endpointId,
  event_id: d.eventId,
  status: d.status,
  attempt_count: d.attemptCount,
  next_attempt_at: d.status === "pending" ? iso(d.nextAttemptAt) : null,
  parked_reason: d.parkedReason,
  replay_of: d.replayOf,
  fields: d.fields,
  is_test: d.isTest,
  signature: d.signature,
  payload_available: d.payloadAvailable,
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
});

export const attemptView = (a: Attempt) => ({
  number: a.number,
  at: iso(a.at),
  status_code: a.statusCode,
  error: a.error,
  response_excerpt: a.responseExcerpt,
  duration_ms: a.durationMs,
});

export const statsView = (s: HourlyStats) => ({
  hour: iso(s.hour),
  succeeded: s.succeeded,
  failed: s.failed,
  parked: s.parked,
});
