import type { Database, Statement } from "bun:sqlite";
import {
  DELIVERY_COLUMNS,
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
import type { SqliteEndpoints } from "./endpoints.ts";
import { statement, type Params } from "./open.ts";

type Page = Statement<
  Row & { id: string; created_at: number },
  [{ account: string; endpoint: string; beforeAt: number; beforeId: string; limit: number }]
>;

/** An endpoint's page of deliveries, newest first; `created_at <= $beforeAt` lets the index start at the cursor. */
function page(sqlite: Database, from: string, where: string): Page {
  return statement(
    sqlite,
    `SELECT ${DELIVERY_COLUMNS} FROM ${from} JOIN events e ON e.id = d.event_id
    WHERE d.endpoint_id = $endpoint AND d.account_id = $account AND ${where}
      AND d.created_at <= $beforeAt AND (d.created_at < $beforeAt OR d.id < $beforeId)
    ORDER BY d.created_at DESC, d.id DESC LIMIT $limit`,
  );
}

function prepare(sqlite: Database) {
  // By status, each through the index that holds it (see schema.ts); a pending one is waiting
  // for its attempt, or leased (few: what this process has in flight or lined up).
  const pages: Record<DeliveryStatus | "all", Page[]> = {
    all: [page(sqlite, "deliveries d", "TRUE")],
    succeeded: [page(sqlite, "deliveries d", "d.status = 'succeeded'")],
    parked: [page(sqlite, "deliveries d INDEXED BY deliveries_parked", "d.status = 'parked'")],
    pending: [
      page(sqlite, "deliveries d INDEXED BY deliveries_waiting", "d.status = 'pending' AND d.lease_until IS NULL"),
      page(sqlite, "deliveries d INDEXED BY deliveries_lease", "d.lease_until IS NOT NULL AND d.status = 'pending'"),
    ],
  };
  return {
    pages,
    delivery: statement(
      sqlite,
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $id`,
    ),
    attempts: statement(sqlite, "SELECT * FROM attempts WHERE delivery_id = $id ORDER BY number, id"),
    parkedSince: statement(
      sqlite,
      `SELECT ${DELIVERY_COLUMNS}, EXISTS (SELECT 1 FROM deliveries r WHERE r.replay_of = d.id) AS replayed
      FROM deliveries d INDEXED BY deliveries_parked JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = $endpoint AND d.status = 'parked' AND d.created_at >= $since AND d.created_at <= $until
        AND (d.created_at > $afterAt OR (d.created_at = $afterAt AND d.id > $afterId))
      ORDER BY d.created_at, d.id LIMIT $limit`,
    ),
    mentionsOf: statement(
      sqlite,
      `SELECT ${EVENT_MESSAGE_COLUMNS} FROM event_messages
      WHERE event_id IN (SELECT value FROM json_each($ids)) ORDER BY seq`,
    ),
    messageEvents: statement(
      sqlite,
      `SELECT ${EVENT_MESSAGE_COLUMNS} FROM event_messages
      WHERE account_id = $account AND message_id = $message ORDER BY received_at, seq`,
    ),
    eventDeliveries: statement(
      sqlite,
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.event_id = $event ORDER BY d.created_at, d.id`,
    ),
    eventBody: statement<{ body: Uint8Array | null }>(sqlite, "SELECT body FROM events WHERE id = $id"),
    hours: statement(
      sqlite,
      "SELECT hour, succeeded, failed, parked FROM endpoint_hours WHERE endpoint_id = $endpoint AND hour >= $since",
    ),
  };
}

export class SqliteHistory implements DeliveryHistory {
  private readonly stmt: ReturnType<typeof prepare>;

  constructor(
    private readonly sqlite: Database,
    private readonly endpoints: SqliteEndpoints,
  ) {
    this.stmt = prepare(sqlite);
  }

  async delivery(id: string) {
    const row = this.stmt.delivery.get({ id });
    return row ? toDelivery(row) : undefined;
  }

  async attempts(deliveryId: string) {
    return this.stmt.attempts.all({ id: deliveryId }).map(toAttempt);
  }

  /**
   * Deliveries are indexed by endpoint only (an index by account would be one more page written per
   * account at every commit of the queue), so an account's list merges one page per endpoint: every
   * delivery belongs to an endpoint of its account, and goes when the endpoint does.
   */
  async deliveries(filter: DeliveryFilter) {
    if (filter.search) return this.searchDeliveries(filter, filter.search);
    const endpointIds =
      filter.endpointId !== undefined ? [filter.endpointId] : this.endpoints.targets(filter.accountId).map((t) => t.id);
    const pages = this.stmt.pages[filter.status ?? "all"];
    const rows = endpointIds.flatMap((endpoint) =>
      pages.flatMap((statement) =>
        statement.all({
          account: filter.accountId,
          endpoint,
          beforeAt: filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
          beforeId: filter.before?.id ?? "",
          limit: filter.limit,
        }),
      ),
    );
    if (endpointIds.length * pages.length > 1) {
      rows.sort((a, b) => b.created_at - a.created_at || (a.id === b.id ? 0 : a.id < b.id ? 1 : -1));
    }
    return rows.slice(0, filter.limit).map(toDelivery);
  }

  /** A search beyond endpoint and status: one statement built for the criteria given (see DeliverySearch). */
  private searchDeliveries(filter: DeliveryFilter, search: DeliverySearch) {
    const params: Params = {
      account: filter.accountId,
      beforeAt: filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
      beforeId: filter.before?.id ?? "\u{10FFFF}",
      limit: filter.limit,
    };
    const param = (value: string | number) => {
      const name = `p${Object.keys(params).length}`;
      params[name] = value;
      return `$${name}`;
    };
    const where = [
      "d.account_id = $account",
      "(d.created_at < $beforeAt OR (d.created_at = $beforeAt AND d.id < $beforeId))",
      ...searchConditions(
        filter,
        search,
        param,
        (p) => `EXISTS (SELECT 1 FROM json_each(e.fields) f WHERE f.value = ${p})`,
      ),
    ];
    const rows = this.sqlite
      .prepare<Row, [Params]>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE ${where.join(" AND ")} ORDER BY d.created_at DESC, d.id DESC LIMIT $limit`)
      .all(params);
    return rows.map(toDelivery);
  }

  async parkedSince(
    endpointId: string,
    since: number,
    until: number,
    after: { createdAt: number; id: string } | null,
    limit: number,
  ) {
    const rows = this.stmt.parkedSince.all({
      endpoint: endpointId,
      since,
      until,
      afterAt: after?.createdAt ?? -1,
      afterId: after?.id ?? "",
      limit,
    });
    return rows.map((row) => ({ delivery: toDelivery(row), replayed: row.replayed === 1 }));
  }

  async mentionsOf(eventIds: string[]) {
    if (eventIds.length === 0) return [];
    return this.stmt.mentionsOf.all({ ids: JSON.stringify(eventIds) }).map(toEventMessage);
  }

  async messageEvents(accountId: string, messageId: string): Promise<MessageEvent[]> {
    return this.stmt.messageEvents.all({ account: accountId, message: messageId }).map((row) => ({
      ...toEventMessage(row),
      deliveries: this.stmt.eventDeliveries.all({ event: row.event_id as string }).map(toDelivery),
    }));
  }

  async eventBody(eventId: string) {
    const row = this.stmt.eventBody.get({ id: eventId });
    return row && row.body !== null ? new Uint8Array(row.body) : null;
  }

  async hourlyStats(endpointId: string, since: number, now: number) {
    return hourlyStats(since, now, this.stmt.hours.all({ endpoint: endpointId, since: hourOf(since) }));
  }
}
