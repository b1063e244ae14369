import { hourOf, HOUR } from "./hours.ts";
import type { DeliveryEndpoint } from "./endpoints.ts";
import type { Attempt, Delivery, DeliveryFilter, DeliverySearch, HourlyStats, MessageEvent } from "./history.ts";
import type { ClaimedDelivery, Completion } from "./queue.ts";

// Rows of the delivery tables, mapped once for both backends: their drivers differ only in how
// values come back (SQLite's booleans as 0 or 1 and arrays as JSON text, PostgreSQL's bigints as
// strings), which the mapping absorbs.

export type Row = Record<string, unknown>;

/**
 * What toDelivery reads, selected from `deliveries d JOIN events e`; `nextAttemptAt` is the
 * expression of the delivery's next attempt where a backend does not keep it in the row.
 */
export const deliveryColumns = (nextAttemptAt = "d.next_attempt_at") => `d.id, d.account_id, d.endpoint_id, d.event_id,
  d.status, d.attempt_count, ${nextAttemptAt} AS next_attempt_at, d.replay_of, d.parked_reason, d.signature, d.created_at, d.updated_at,
  e.fields AS event_fields, e.is_test, (e.body IS NOT NULL AND NOT d.payload_deleted) AS payload_available`;

export const DELIVERY_COLUMNS = deliveryColumns();

/** What an event_messages row holds, selected as is. */
export const EVENT_MESSAGE_COLUMNS = "event_id, message_id, phone_number_id, kind, status, error_code, received_at";

const bool = (value: unknown) => value === true || value === 1;
const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

export function toDelivery(row: Row): Delivery {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    endpointId: row.endpoint_id as string,
    eventId: row.event_id as string,
    status: row.status as Delivery["status"],
    attemptCount: row.attempt_count as number,
    nextAttemptAt: numberOrNull(row.next_attempt_at),
    replayOf: row.replay_of as string | null,
    parkedReason: row.parked_reason as Delivery["parkedReason"],
    payloadAvailable: bool(row.payload_available),
    fields:
      typeof row.event_fields === "string"
        ? (JSON.parse(row.event_fields) as string[])
        : (row.event_fields as string[]),
    isTest: bool(row.is_test),
    signature: row.signature as Delivery["signature"],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export function toAttempt(row: Row): Attempt {
  return {
    number: row.number as number,
    at: Number(row.at),
    statusCode: numberOrNull(row.status_code),
    error: row.error as string | null,
    responseExcerpt: row.response_excerpt as string | null,
    durationMs: row.duration_ms as number,
  };
}

export function toEventMessage(row: Row): Omit<MessageEvent, "deliveries"> {
  return {
    eventId: row.event_id as string,
    messageId: row.message_id as string,
    phoneNumberId: row.phone_number_id as string | null,
    kind: row.kind as MessageEvent["kind"],
    status: row.status as string | null,
    errorCode: numberOrNull(row.error_code),
    receivedAt: Number(row.received_at),
  };
}

/**
 * Claimed rows (DELIVERY_COLUMNS with the event's `body` and `upstream_signature`), in claim order,
 * as attempts take them. An event's deliveries to several endpoints share one copy of its body; a
 * delivery whose endpoint is no longer there is left out.
 */
export function claimedDeliveries(
  rows: Row[],
  leaseId: string,
  endpointOf: (id: string) => DeliveryEndpoint | undefined,
): ClaimedDelivery[] {
  const bodies = new Map<string, Uint8Array>();
  const claimed: ClaimedDelivery[] = [];
  for (const row of rows) {
    const delivery = toDelivery(row);
    const endpoint = endpointOf(delivery.endpointId);
    if (!endpoint) continue;
    let body: Uint8Array | null = null;
    if (delivery.payloadAvailable && row.body !== null) {
      body = bodies.get(delivery.eventId) ?? new Uint8Array(row.body as Uint8Array);
      bodies.set(delivery.eventId, body);
    }
    claimed.push({ delivery, leaseId, endpoint, body, upstreamSignature: row.upstream_signature as string | null });
  }
  return claimed;
}

/**
 * What a completion adds to its endpoint's hourly counters: its attempt, succeeded or failed, in
 * the hour it started; its delivery, if parked, in the hour it parked.
 */
export function hourCounts(c: Completion): HourlyStats[] {
  const counts: HourlyStats[] = [];
  // An attempt's effect is "success" exactly when classify() found a 2xx.
  const ok = c.effect === "success";
  if (c.attempt) counts.push({ hour: hourOf(c.attempt.at), succeeded: ok ? 1 : 0, failed: ok ? 0 : 1, parked: 0 });
  if (c.next.status === "parked") counts.push({ hour: hourOf(c.now), succeeded: 0, failed: 0, parked: 1 });
  return counts;
}

/**
 * An endpoint's hours from the one `since` falls in to the one `now` does, oldest first, each with
 * the counts of its endpoint_hours row (`rows`: those from hourOf(since) on), or zeros.
 */
export function hourlyStats(since: number, now: number, rows: Row[]): HourlyStats[] {
  const buckets = new Map<number, HourlyStats>();
  for (let hour = hourOf(since); hour <= now; hour += HOUR)
    buckets.set(hour, { hour, succeeded: 0, failed: 0, parked: 0 });
  for (const row of rows) {
    const bucket = buckets.get(Number(row.hour));
    if (bucket)
      Object.assign(bucket, {
        succeeded: Number(row.succeeded),
        failed: Number(row.failed),
        parked: Number(row.parked),
      });
  }
  return [...buckets.values()];
}

/**
 * The conditions, on `deliveries d JOIN events e`, of a filter's endpoint and status and of the
 * search's criteria: `param` gives each value its placeholder in the backend's dialect, and
 * `hasField` the dialect's test that the event's fields hold one.
 */
export function searchConditions(
  filter: DeliveryFilter,
  search: DeliverySearch,
  param: (value: string | number) => string,
  hasField: (placeholder: string) => string,
): string[] {
  const where: string[] = [];
  const add = (value: string | number | undefined, condition: (placeholder: string) => string) => {
    if (value !== undefined) where.push(condition(param(value)));
  };
  add(filter.endpointId, (p) => `d.endpoint_id = ${p}`);
  add(filter.status, (p) => `d.status = ${p}`);
  add(search.from, (p) => `d.created_at >= ${p}`);
  add(search.to, (p) => `d.created_at < ${p}`);
  add(search.field, hasField);
  add(
    search.phoneNumberId,
    (p) => `EXISTS (SELECT 1 FROM event_messages m WHERE m.event_id = d.event_id AND m.phone_number_id = ${p})`,
  );
  add(
    search.messageId,
    (p) => `EXISTS (SELECT 1 FROM event_messages m WHERE m.event_id = d.event_id AND m.message_id = ${p})`,
  );
  add(
    search.lastStatusCode,
    (p) => `(SELECT a.status_code FROM attempts a WHERE a.delivery_id = d.id ORDER BY a.number DESC LIMIT 1) = ${p}`,
  );
  return where;
}
