import type { SQL } from "bun";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Retention } from "../types.ts";
import { toEventMessage } from "../message-rows.ts";
import type {
  Attempt,
  ClaimedDelivery,
  ClaimOptions,
  Delivery,
  DeliveryFilter,
  DeliveryStatus,
  Endpoint,
  EndpointChange,
  EndpointPatch,
  DeliverySearch,
  HourlyStats,
  MessageEvent,
  NewDelivery,
  NewEvent,
  WebhookStore,
} from "../webhooks.ts";
import type { ChangeFeed } from "./changes.ts";
import { needsTransaction, recordCompletions, type CompletionInput } from "./completions.ts";
import { transaction, type PgDb } from "./connect.ts";
import { PgEndpoints } from "./endpoints.ts";
import { TurnBatch } from "./turn-batch.ts";

type Row = Record<string, unknown>;
const HOUR = 3_600_000;
const hourOf = (at: number) => Math.floor(at / HOUR) * HOUR;
/** Channel of "deliveries were queued": every instance's dispatcher wakes and claims. */
const WORK_CHANNEL = "switchboard_work";
/** Deliveries deleted per transaction by the purge and by an endpoint's deletion. */
const DELETE_BATCH = 1_000;
/** pg_try_advisory_xact_lock's keys: the claim's (per endpoint, in its SQL function) and the purge's. */
const LOCK_SPACE = 1_398_030_659;
const PURGE_LOCK = 1;
/** SQLSTATEs of a transaction that lost a race with another and may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);

const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));

const DELIVERY_COLUMNS = `d.id, d.account_id, d.endpoint_id, d.event_id, d.status, d.attempt_count, d.next_attempt_at, d.replay_of,
  d.parked_reason, d.created_at, d.updated_at, e.fields AS event_fields, e.is_test,
  (e.body IS NOT NULL AND NOT d.payload_deleted) AS payload_available`;

function toDelivery(row: Row): Delivery {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    endpointId: row.endpoint_id as string,
    eventId: row.event_id as string,
    status: row.status as DeliveryStatus,
    attemptCount: row.attempt_count as number,
    nextAttemptAt: num(row.next_attempt_at),
    replayOf: row.replay_of as string | null,
    parkedReason: row.parked_reason as Delivery["parkedReason"],
    payloadAvailable: row.payload_available as boolean,
    fields: row.event_fields as string[],
    isTest: row.is_test as boolean,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** A transaction that lost a race (deadlock, serialization) is run again; anything else is thrown. */
async function retried<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 5 || !RETRYABLE.has((error as { errno?: string }).errno ?? "")) throw error;
    }
  }
}

/**
 * The webhook relay's storage on PostgreSQL: a queue that any number of instances work at once.
 * Claims lease deliveries in one short transaction (the switchboard_claim function: FOR UPDATE
 * SKIP LOCKED, at most `perEndpoint` live leases per endpoint across every instance);
 * completions are fenced on the lease id; a lease that runs out makes its delivery due again; new
 * work is told with pg_notify in the enqueue's own commit, and the dispatcher's tick is the polling
 * backstop. Enqueues and completions arriving in one turn of the event loop share one commit.
 */
export class PgWebhooks implements WebhookStore {
  /** Every instance claims from the same queue. */
  readonly soleWorker = false;
  private readonly endpointStore: PgEndpoints;
  private readonly enqueues: TurnBatch<{ events: NewEvent[]; deliveries: NewDelivery[] }, void>;
  private readonly completions: TurnBatch<CompletionInput, EndpointChange>;
  private readonly workListeners = new Set<() => void>();
  private workSubscription: { unlisten(): Promise<void> } | null = null;

  constructor(
    private readonly db: PgDb,
    sealer: Sealer,
    private readonly feed: ChangeFeed,
  ) {
    this.endpointStore = new PgEndpoints(db, sealer, feed);
    this.enqueues = new TurnBatch((batch) =>
      this.insert(
        batch.flatMap((b) => b.events),
        batch.flatMap((b) => b.deliveries),
      ).then(() => batch.map(() => undefined)),
    );
    this.completions = new TurnBatch((inputs) => this.complete(inputs));
  }

  private get sql(): SQL {
    return this.db.$client;
  }

  /** Listens for other instances' new work (and, after a lost connection, wakes once to catch up). */
  async start(): Promise<void> {
    let listening = false;
    this.workSubscription = await this.sql.listen(
      WORK_CHANNEL,
      () => this.wakeListeners(),
      () => {
        if (listening) this.wakeListeners();
        listening = true;
      },
    );
  }

  async close(): Promise<void> {
    this.workListeners.clear();
    await this.workSubscription?.unlisten().catch(() => {});
  }

  private wakeListeners(): void {
    for (const listener of this.workListeners) listener();
  }

  onNewWork(listener: () => void): () => void {
    this.workListeners.add(listener);
    return () => this.workListeners.delete(listener);
  }

  createEndpoint(endpoint: Endpoint) {
    return this.endpointStore.create(endpoint);
  }
  endpoint(id: string) {
    return this.endpointStore.get(id);
  }
  endpoints(accountId: string) {
    return this.endpointStore.ofAccount(accountId);
  }
  targets(accountId: string) {
    return this.endpointStore.targets(accountId);
  }
  async deliveryEndpoint(id: string) {
    return (await this.endpointStore.forDelivery([id])).get(id);
  }
  updateEndpoint(id: string, patch: EndpointPatch) {
    return this.endpointStore.update(id, patch);
  }

  async deleteEndpoint(id: string) {
    await this.endpointStore.stopSending(id);
    // Its deliveries in batches, so that no transaction grows with the endpoint's history.
    while (
      (await this.deleteBatch(`SELECT id FROM deliveries WHERE endpoint_id = $1 LIMIT ${DELETE_BATCH}`, [id]))!
        .deliveries === DELETE_BATCH
    );
    // Those stored since go with it (cascade); so do the events no other delivery needs.
    const gone = await transaction(this.db, async (tx) => {
      const events = (
        (await tx.raw.unsafe("SELECT DISTINCT event_id FROM deliveries WHERE endpoint_id = $1", [id])) as Row[]
      ).map((r) => r.event_id as string);
      const deleted = await this.endpointStore.delete(id, tx);
      await this.dropOrphanEvents(tx.raw, events);
      return deleted;
    });
    await this.endpointStore.changed([id]);
    return gone;
  }

  enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    return this.enqueues.run({ events, deliveries });
  }

  /** Events, the message ids they mention and their deliveries in ONE statement (one round trip, one commit), with the notification of new work. */
  private async insert(events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    const mentions = events.flatMap((e) =>
      (e.messages ?? []).map((m) => ({ ...m, eventId: e.id, accountId: e.accountId, at: e.receivedAt })),
    );
    await this.sql.unsafe(
      `WITH ev AS (
        INSERT INTO events (id, account_id, received_at, body, upstream_signature, fields, is_test)
        SELECT e.id, e.account_id, e.received_at, e.body, e.signature, string_to_array(e.fields, ','), e.is_test
        FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bytea[], $5::text[], $6::text[], $7::bool[])
          AS e(id, account_id, received_at, body, signature, fields, is_test)
      ), dl AS (
        INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, attempt_count, next_attempt_at, lease_until, lease_id,
          replay_of, created_at, updated_at)
        SELECT d.id, d.account_id, d.endpoint_id, d.event_id, 'pending', 0, COALESCE(d.lease_until, d.next), d.lease_until, d.lease_id,
          d.replay_of, d.created_at, d.created_at
        FROM unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::text[], $15::text[], $16::bigint[])
          AS d(id, account_id, endpoint_id, event_id, next, lease_until, lease_id, replay_of, created_at)
      ), em AS (
        INSERT INTO event_messages (event_id, account_id, message_id, phone_number_id, kind, status, error_code, received_at)
        SELECT * FROM unnest($17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::int[], $24::bigint[])
      )
      SELECT pg_notify('${WORK_CHANNEL}', '') WHERE cardinality($8::text[]) > 0`,
      [
        events.map((e) => e.id),
        events.map((e) => e.accountId),
        events.map((e) => e.receivedAt),
        events.map((e) => e.body),
        events.map((e) => e.upstreamSignature),
        events.map((e) => e.fields.join(",")),
        events.map((e) => e.isTest),
        deliveries.map((d) => d.id),
        deliveries.map((d) => d.accountId),
        deliveries.map((d) => d.endpointId),
        deliveries.map((d) => d.eventId),
        deliveries.map((d) => d.nextAttemptAt),
        deliveries.map((d) => d.lease?.until ?? null),
        deliveries.map((d) => d.lease?.id ?? null),
        deliveries.map((d) => d.replayOf),
        deliveries.map((d) => d.createdAt),
        mentions.map((m) => m.eventId),
        mentions.map((m) => m.accountId),
        mentions.map((m) => m.messageId),
        mentions.map((m) => m.phoneNumberId),
        mentions.map((m) => m.kind),
        mentions.map((m) => m.status),
        mentions.map((m) => m.errorCode),
        mentions.map((m) => m.at),
      ],
    );
  }

  async claimDue(now: number, options: ClaimOptions): Promise<ClaimedDelivery[]> {
    const rows = (await retried(() =>
      this.sql.unsafe("SELECT * FROM switchboard_claim($1, $2, $3, $4, $5, $6)", [
        now,
        options.leaseId,
        now + options.leaseMs,
        options.limit,
        options.perEndpoint,
        Math.min(options.maxBytes, Number.MAX_SAFE_INTEGER),
      ]),
    )) as Row[];
    if (rows.length === 0) return [];
    const endpoints = await this.endpointStore.forDelivery(rows.map((row) => row.endpoint_id as string));
    // An event's deliveries to several endpoints share one copy of its body.
    const bodies = new Map<string, Uint8Array>();
    const claimed: ClaimedDelivery[] = [];
    for (const row of rows) {
      const delivery = toDelivery(row);
      const endpoint = endpoints.get(delivery.endpointId);
      if (!endpoint) continue;
      let body: Uint8Array | null = null;
      if (row.body !== null) {
        body = bodies.get(delivery.eventId) ?? new Uint8Array(row.body as Uint8Array);
        bodies.set(delivery.eventId, body);
      }
      claimed.push({
        delivery,
        leaseId: options.leaseId,
        endpoint,
        body,
        upstreamSignature: row.upstream_signature as string | null,
      });
    }
    return claimed;
  }

  /** Other instances may hold live leases: nothing is released, leases run out by themselves. */
  async recoverLeases(_now: number): Promise<void> {}

  completeAttempt(input: CompletionInput): Promise<EndpointChange> {
    return this.completions.run(input);
  }

  private async complete(inputs: CompletionInput[]): Promise<EndpointChange[]> {
    // Successes and retries alone are one statement, committed on its own.
    if (!needsTransaction(inputs)) return (await retried(() => recordCompletions(this.sql, inputs))).changes;
    const { changes, disabled } = await retried(() =>
      transaction(this.db, async (tx) => {
        const result = await recordCompletions(tx.raw, inputs);
        // Every instance stops sending to an endpoint this batch disabled.
        if (result.disabled.length > 0) await this.feed.record(tx, "endpoint", result.disabled);
        return result;
      }),
    );
    if (disabled.length > 0) await this.endpointStore.changed(disabled);
    return changes;
  }

  async delivery(id: string) {
    const [row] = (await this.sql.unsafe(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1`,
      [id],
    )) as Row[];
    return row ? toDelivery(row) : undefined;
  }

  /** A search beyond endpoint and status: one statement built for the criteria given (see DeliverySearch). */
  private async searchDeliveries(filter: DeliveryFilter, search: DeliverySearch): Promise<Delivery[]> {
    const params: unknown[] = [
      filter.accountId,
      filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
      filter.before?.id ?? "\u{10FFFF}",
      filter.limit,
    ];
    const where = ["d.account_id = $1", "(d.created_at, d.id) < ($2, $3)"];
    const add = (condition: (n: string) => string, value: unknown) => {
      if (value === undefined) return;
      params.push(value);
      where.push(condition(`$${params.length}`));
    };
    add((n) => `d.endpoint_id = ${n}`, filter.endpointId);
    add((n) => `d.status = ${n}`, filter.status);
    add((n) => `d.created_at >= ${n}`, search.from);
    add((n) => `d.created_at < ${n}`, search.to);
    add((n) => `${n} = ANY(e.fields)`, search.field);
    add(
      (n) => `EXISTS (SELECT 1 FROM event_messages m WHERE m.event_id = d.event_id AND m.phone_number_id = ${n})`,
      search.phoneNumberId,
    );
    add(
      (n) => `EXISTS (SELECT 1 FROM event_messages m WHERE m.event_id = d.event_id AND m.message_id = ${n})`,
      search.messageId,
    );
    add(
      (n) => `(SELECT a.status_code FROM attempts a WHERE a.delivery_id = d.id ORDER BY a.number DESC LIMIT 1) = ${n}`,
      search.lastStatusCode,
    );
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
      WHERE d.endpoint_id = $1 AND d.status = 'parked' AND d.created_at >= $2 AND d.created_at <= $3 AND (d.created_at, d.id) > ($4, $5)
      ORDER BY d.created_at, d.id LIMIT $6`,
      [endpointId, since, until, after?.createdAt ?? -1, after?.id ?? "", limit],
    )) as Row[];
    return rows.map((row) => ({ delivery: toDelivery(row), replayed: row.replayed === true }));
  }

  async mentionsOf(eventIds: string[]) {
    if (eventIds.length === 0) return [];
    const rows = (await this.sql.unsafe(
      `SELECT event_id, message_id, phone_number_id, kind, status, error_code, received_at FROM event_messages
      WHERE event_id = ANY($1::text[]) ORDER BY seq`,
      [eventIds],
    )) as Row[];
    return rows.map(toEventMessage);
  }

  async messageEvents(accountId: string, messageId: string): Promise<MessageEvent[]> {
    const rows = (await this.sql.unsafe(
      `SELECT event_id, message_id, phone_number_id, kind, status, error_code, received_at FROM event_messages
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

  async attempts(deliveryId: string): Promise<Attempt[]> {
    const rows = (await this.sql.unsafe("SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY number, id", [
      deliveryId,
    ])) as Row[];
    return rows.map((row) => ({
      number: row.number as number,
      at: Number(row.at),
      statusCode: row.status_code as number | null,
      error: row.error as string | null,
      responseExcerpt: row.response_excerpt as string | null,
      durationMs: row.duration_ms as number,
    }));
  }

  /** An account's list merges one page per endpoint (each read newest first along its own index), in one statement. */
  async deliveries(filter: DeliveryFilter) {
    if (filter.search) return this.searchDeliveries(filter, filter.search);
    const endpointIds =
      filter.endpointId !== undefined ? [filter.endpointId] : this.targets(filter.accountId).map((t) => t.id);
    if (endpointIds.length === 0) return [];
    // The status is written into the text, so that the planner uses the partial index that holds it.
    const status = filter.status === undefined ? "" : `AND d.status = '${filter.status}'`;
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

  async eventBody(eventId: string) {
    const [row] = (await this.sql.unsafe("SELECT body FROM events WHERE id = $1", [eventId])) as Row[];
    return row && row.body !== null ? new Uint8Array(row.body as Uint8Array) : null;
  }

  async hourlyStats(endpointId: string, since: number, now: number): Promise<HourlyStats[]> {
    const first = hourOf(since);
    const buckets = new Map<number, HourlyStats>();
    for (let hour = first; hour <= now; hour += HOUR) buckets.set(hour, { hour, succeeded: 0, failed: 0, parked: 0 });
    const rows = (await this.sql.unsafe(
      "SELECT hour, succeeded, failed, parked FROM endpoint_hours WHERE endpoint_id = $1 AND hour >= $2",
      [endpointId, first],
    )) as Row[];
    for (const row of rows) {
      const b = buckets.get(Number(row.hour));
      if (b)
        Object.assign(b, {
          succeeded: row.succeeded as number,
          failed: row.failed as number,
          parked: row.parked as number,
        });
    }
    return [...buckets.values()];
  }

  async pendingCount() {
    const [row] = (await this.sql.unsafe("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'")) as Row[];
    return Number(row!.n);
  }

  /**
   * In batches, each its own short transaction under an advisory lock: when every instance runs
   * it, one purges and the others find the lock taken and stop.
   */
  async purgeExpired(now: number, retentionMs: Record<Retention, number>) {
    const removed = { deliveries: 0, events: 0 };
    const expiry = `$1::bigint - CASE a.retention WHEN '7d' THEN $3::bigint ELSE $2::bigint END`;
    const params = [now, retentionMs["24h"], retentionMs["7d"]];
    for (;;) {
      const batch = await this.deleteBatch(
        `SELECT d.id FROM accounts a JOIN endpoints p ON p.account_id = a.id JOIN deliveries d ON d.endpoint_id = p.id
        WHERE d.created_at < ${expiry} LIMIT ${DELETE_BATCH}`,
        params,
        true,
      );
      if (batch === null) return removed;
      removed.deliveries += batch.deliveries;
      removed.events += batch.events;
      if (batch.deliveries < DELETE_BATCH) break;
    }
    await this.sql.unsafe(
      `DELETE FROM endpoint_hours h USING endpoints p, accounts a
      WHERE h.endpoint_id = p.id AND p.account_id = a.id AND h.hour + ${HOUR} <= ${expiry}`,
      params,
    );
    return removed;
  }

  /**
   * Deletes the deliveries `select` picks (with their attempts, by cascade) and then the events no
   * delivery refers to any more, in one transaction; null when `exclusive` and another instance
   * holds the purge's lock.
   */
  private deleteBatch(
    select: string,
    params: unknown[],
    exclusive = false,
  ): Promise<{ deliveries: number; events: number } | null> {
    return retried(() =>
      this.sql.begin(async (tx) => {
        if (exclusive) {
          const [lock] = (await tx.unsafe("SELECT pg_try_advisory_xact_lock($1, $2) AS locked", [
            LOCK_SPACE,
            PURGE_LOCK,
          ])) as Row[];
          if (!lock!.locked) return null;
        }
        const gone = (await tx.unsafe(
          `DELETE FROM deliveries WHERE id IN (${select}) RETURNING event_id`,
          params,
        )) as Row[];
        return {
          deliveries: gone.length,
          events: await this.dropOrphanEvents(
            tx,
            gone.map((row) => row.event_id as string),
          ),
        };
      }),
    );
  }

  /** Deletes those of these events that no delivery refers to any more; returns how many. */
  private async dropOrphanEvents(tx: Pick<SQL, "unsafe">, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const gone = (await tx.unsafe(
      `DELETE FROM events e WHERE e.id = ANY($1::text[])
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id) RETURNING e.id`,
      [[...new Set(eventIds)]],
    )) as Row[];
    return gone.length;
  }
}
