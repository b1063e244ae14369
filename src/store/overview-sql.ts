import type { DeliveryTotals, DisabledEndpoint, EventCounts } from "./overview.ts";

type Row = Record<string, unknown>;

/**
 * The overview's statements, the same text on both backends: `$1`… are positional on each, an
 * endpoint's `enabled` is a truth value on each (SQLite's 0/1), and integer division floors on each.
 */
export const OVERVIEW_SQL = {
  /** Two sums per hour given, parameters $1… in order. */
  eventsSince: (hours: number) =>
    `SELECT ${Array.from(
      { length: hours },
      (_, i) =>
        `coalesce(sum(received) FILTER (WHERE hour >= $${i + 1}), 0) AS r${i}, coalesce(sum(unrouted) FILTER (WHERE hour >= $${i + 1}), 0) AS u${i}`,
    ).join(", ")} FROM event_hours`,
  /** Adds one hour's counts ($1 hour, $2 received, $3 unrouted) to what is there. */
  addEventCounts: `INSERT INTO event_hours (hour, received, unrouted) VALUES ($1, $2, $3)
    ON CONFLICT (hour) DO UPDATE SET received = event_hours.received + excluded.received,
    unrouted = event_hours.unrouted + excluded.unrouted`,
  deliveriesSince: `SELECT coalesce(sum(succeeded), 0) AS succeeded, coalesce(sum(failed), 0) AS failed,
    coalesce(sum(parked), 0) AS parked FROM endpoint_hours WHERE hour >= $1`,
  failingEndpoints: "SELECT count(*) AS n FROM endpoints WHERE enabled AND consecutive_failures > 0",
  disabledSince: `SELECT id, account_id, url, disabled_reason, updated_at FROM endpoints
    WHERE NOT enabled AND updated_at >= $1 ORDER BY updated_at DESC, id LIMIT $2`,
};

/** PostgreSQL's sums and counts come back as text (bigint). */
const n = (value: unknown) => Number(value ?? 0);

export const toDeliveryTotals = (row: Row | undefined): DeliveryTotals => ({
  succeeded: n(row?.succeeded),
  failed: n(row?.failed),
  parked: n(row?.parked),
});

export const toDisabledEndpoint = (row: Row): DisabledEndpoint => ({
  id: row.id as string,
  accountId: row.account_id as string,
  url: row.url as string,
  disabledReason: row.disabled_reason as DisabledEndpoint["disabledReason"],
  updatedAt: n(row.updated_at),
});

export const toCount = (row: Row | undefined | null): number => n(row?.n);

/** The counts of an eventsSince statement, in the order of its hours. */
export const toEventCounts = (row: Row | undefined | null, hours: number): EventCounts[] =>
  Array.from({ length: hours }, (_, i) => ({ received: n(row?.[`r${i}`]), unrouted: n(row?.[`u${i}`]) }));
