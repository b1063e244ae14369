import type { SQL } from "bun";
import {
  deliveryColumns,
  EVENT_MESSAGE_COLUMNS,
  hourlyStats,
  searchConditions,
  toAttempt,
  toDelivery,
  toEventMessage,
  type Row,
} from "../delivery-rows.ts";
import type { DeliveryFilter, DeliveryHistory, DeliverySearch, DeliveryStatus, MessageEvent } from "../history.ts";
import { hourOf } from "../hours.ts";
import type { PgDb } from "./connect.ts";
import type { PgEndpoints } from "./endpoints.ts";

/**
 * A claim leaves a delivery's row as it is (its lease is in endpoint_slots): while a slot holds
 * it, its next attempt is its lease's end, when it comes due again if no attempt is recorded.
 */
const DELIVERY_COLUMNS = deliveryColumns(`COALESCE((SELECT s.lease_until FROM endpoint_slots s
  WHERE s.endpoint_id = d.endpoint_id AND s.delivery_id = d.id), d.next_attempt_at)`);

/**
 * The condition of a list filtered by status, on `d` of endpoint `p.endpoint_id`, written so that
 * it is read through an index: pending ones from their due work, parked ones from
 * deliveries_parked (whose condition is their reason, see schema/queue.ts).
 */
const STATUS_CONDITIONS: Record<DeliveryStatus, string> = {
  pending:
    "AND d.status = 'pending' AND d.id IN (SELECT w.delivery_id FROM due_deliveries w WHERE w.endpoint_id = p.endpoint_id)",
  parked: "AND d.status = 'parked' AND d.parked_reason IS NOT NULL",
  succeeded: "AND d.status = 'succeeded'",
};

export class PgHistory implements DeliveryHistory {
  constructor(
    private readonly db: PgDb,
    private readonly endpoints: PgEndpoints,
  ) {}

  private get sql(): SQL {
    return this.db.$client;
  }

  async delivery(id: string) {
    const [row] = (await this.sql.unsafe(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1`,
      [id],
    )) as Row[];
    return row ? toDelivery(row) : undefined;
  }

  async attempts(deliveryId: string) {
    const rows = (await this.sql.unsafe("SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY number, id", [
      deliveryId,
    ])) as Row[];
    return rows.map(toAttempt);
  }

  /** An account's list merges one page per endpoint (each read newest first along its own index), in one statement. */
  async deliveries(filter: DeliveryFilter) {
    if (filter.search) return this.searchDeliveries(filter, filter.search);
    const endpointIds =
      filter.endpointId !== undefined ? [filter.endpointId] : this.endpoints.targets(filter.accountId).map((t) => t.id);
    if (endpointIds.length === 0) return [];
    const status = filter.status === undefined ? "" : STATUS_CONDITIONS[filter.status];
    const rows = (await this.sql.unsafe(
      `SELECT ${DELIVERY_COLUMNS} FROM unnest($1::text[]) AS p(endpoint_id)
      CROSS JOIN LATERAL (
        SELECT * FROM deliveries d WHERE d.endpoint_id = p.endpoint_id AND d.account_id = $2 ${status}
          AND (d.created_at, d.id) < ($3, $4)
        ORDER BY d.created_at DESC, d.id DESC LIMIT $5
      ) d
      JOIN events e ON e.id = d.event_id
      ORDER BY d.created_at DESC, d.id DESC LIMIT $5`,
      [
        endpointIds,
        filter.accountId,
        filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
        filter.before?.id ?? "\u{10FFFF}",
        filter.limit,
      ],
    )) as Row[];
    return rows.map(toDelivery);
  }

  /** A search beyond endpoint and status: one statement built for the criteria given (see DeliverySearch). */
  private async searchDeliveries(filter: DeliveryFilter, search: DeliverySearch) {
    const params: unknown[] = [
      filter.accountId,
      filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
      filter.before?.id ?? "\u{10FFFF}",
      filter.limit,
    ];
    const param = (value: string | number) => `$${params.push(value)}`;
    const where = [
      "d.account_id = $1",
      "(d.created_at, d.id) < ($2, $3)",
      ...searchConditions(filter, search, param, (p) => `${p} = ANY(e.fields)`),
    ];
    const rows = (await this.sql.unsafe(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE ${where.join(" AND ")} ORDER BY d.created_at DESC, d.id DESC LIMIT $4`,
      params,
    )) as Row[];
    return rows.map(toDelivery);
  }

  async parkedSince(
    endpointId: string,
    since: number,
    until: number,
    after: { createdAt: number; id: string } | null,
    limit: number,
  ) {
    const rows = (await this.sql.unsafe(
      `SELECT ${DELIVERY_COLUMNS}, EXISTS (SELECT 1 FROM deliveries r WHERE r.replay_of = d.id) AS replayed
      FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = $1 AND d.status = 'parked' AND d.parked_reason IS NOT NULL AND d.created_at >= $2 AND d.created_at <= $3 AND (d.created_at, d.id) > ($4, $5)
      ORDER BY d.created_at, d.id LIMIT $6`,
      [endpointId, since, until, after?.createdAt ?? -1, after?.id ?? "", limit],
    )) as Row[];
    return rows.map((row) => ({ delivery: toDelivery(row), replayed: row.replayed === true }));
  }

  async mentionsOf(eventIds: string[]) {
    if (eventIds.length === 0) return [];
    const rows = (await this.sql.unsafe(
      `SELECT ${EVENT_MESSAGE_COLUMNS} FROM event_messages
      WHERE event_id = ANY($1::text[]) ORDER BY seq`,
      [eventIds],
    )) as Row[];
    return rows.map(toEventMessage);
  }

  async messageEvents(accountId: string, messageId: string): Promise<MessageEvent[]> {
    const rows = (await this.sql.unsafe(
      `SELECT ${EVENT_MESSAGE_COLUMNS} FROM event_messages
      WHERE account_id = $1 AND message_id = $2 ORDER BY received_at, seq`,
      [accountId, messageId],
    )) as Row[];
    if (rows.length === 0) return [];
    const deliveries = (await this.sql.unsafe(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.event_id = ANY($1::text[]) ORDER BY d.created_at, d.id`,
      [rows.map((r) => r.event_id as string)],
    )) as Row[];
    return rows.map((row) => ({
      ...toEventMessage(row),
      deliveries: deliveries.filter((d) => d.event_id === row.event_id).map(toDelivery),
    }));
  }

  async eventBody(eventId: string) {
    const [row] = (await this.sql.unsafe("SELECT body FROM events WHERE id = $1", [eventId])) as {
      body: Uint8Array | null;
    }[];
    return row && row.body !== null ? new Uint8Array(row.body) : null;
  }

  async hourlyStats(endpointId: string, since: number, now: number) {
    const rows = (await this.sql.unsafe(
      "SELECT hour, succeeded, failed, parked FROM endpoint_hours WHERE endpoint_id = $1 AND hour >= $2",
      [endpointId, hourOf(since)],
    )) as Row[];
    return hourlyStats(since, now, rows);
  }
}
