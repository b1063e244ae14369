import type { SQL } from "bun";
import { claimedDeliveries, type Row } from "../delivery-rows.ts";
import { GroupCommit } from "../group-commit.ts";
import type {
  ClaimedDelivery,
  ClaimOptions,
  Completion,
  DeliveryQueue,
  EndpointChange,
  NewDelivery,
  NewEvent,
} from "../queue.ts";
import { recordAudit } from "./audit.ts";
import type { ChangeFeed } from "./changes.ts";
import { needsTransaction, recordCompletions } from "./completions.ts";
import { retried, transaction, type PgDb } from "./connect.ts";
import type { PgEndpoints } from "./endpoints.ts";
import { isUnavailable } from "./unavailable.ts";

/** Channel of "deliveries were queued": every instance's dispatcher wakes and claims. */
const WORK_CHANNEL = "switchboard_work";

/**
 * The queue on PostgreSQL, which any number of instances work at once. Claims lease deliveries in
 * one short transaction (the switchboard_claim function: FOR UPDATE SKIP LOCKED, at most
 * `perEndpoint` live leases per endpoint across every instance); completions are fenced on the
 * lease id; a lease that runs out makes its delivery due again; new work is told with pg_notify in
 * the enqueue's own commit, and the dispatcher's tick is the polling backstop. Enqueues and
 * completions arriving in one turn of the event loop share one commit (group commit).
 */
export class PgQueue implements DeliveryQueue {
  /** Every instance claims from the same queue. */
  readonly soleWorker = false;
  private readonly enqueues: GroupCommit<{ events: NewEvent[]; deliveries: NewDelivery[] }, void>;
  private readonly completions: GroupCommit<Completion, EndpointChange>;
  private readonly workListeners = new Set<() => void>();
  private workSubscription: { unlisten(): Promise<void> } | null = null;

  constructor(
    private readonly db: PgDb,
    private readonly endpoints: PgEndpoints,
    private readonly feed: ChangeFeed,
  ) {
    // A batch that failed because the database could not be reached would fail alone too.
    const retryAlone = (error: unknown) => !isUnavailable(error);
    this.enqueues = new GroupCommit({
      commit: async (batch) => {
        const events = batch.flatMap((b) => b.events);
        const deliveries = batch.flatMap((b) => b.deliveries);
        const audits = deliveries.flatMap((d) => (d.audit ? [d.audit] : []));
        // Replays asked for by someone come with their audit entry: written in the same transaction.
        if (audits.length === 0) await this.insert(this.sql, events, deliveries);
        else
          await transaction(this.db, async (tx) => {
            await this.insert(tx.raw, events, deliveries);
            for (const entry of audits) await recordAudit(tx.raw, entry);
          });
        return batch.map((): void => undefined);
      },
      retryAlone,
    });
    this.completions = new GroupCommit({ commit: (batch) => this.complete(batch), retryAlone });
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

  enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    return this.enqueues.run({ events, deliveries });
  }

  /** Events, the message ids they mention and their deliveries in ONE statement (one round trip, one commit), with the notification of new work. */
  private async insert(sql: SQL, events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    const mentions = events.flatMap((e) =>
      (e.messages ?? []).map((m) => ({ ...m, eventId: e.id, accountId: e.accountId, at: e.receivedAt })),
    );
    await sql.unsafe(
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

  /** Other instances may hold live leases: nothing is released, leases run out by themselves. */
  async recoverLeases(_now: number): Promise<void> {}

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
    const endpoints = await this.endpoints.forDeliveries(rows.map((row) => row.endpoint_id as string));
    return claimedDeliveries(rows, options.leaseId, (id) => endpoints.get(id));
  }

  completeAttempt(completion: Completion): Promise<EndpointChange> {
    return this.completions.run(completion);
  }

  private async complete(batch: Completion[]): Promise<EndpointChange[]> {
    // Successes and retries alone are one statement, committed on its own.
    if (!needsTransaction(batch)) return (await retried(() => recordCompletions(this.sql, batch))).changes;
    const { changes, disabled } = await retried(() =>
      transaction(this.db, async (tx) => {
        const result = await recordCompletions(tx.raw, batch);
        // Every instance stops sending to an endpoint this batch disabled.
        if (result.disabled.length > 0) await this.feed.record(tx, "endpoint", result.disabled);
        return result;
      }),
    );
    if (disabled.length > 0) await this.endpoints.changed(disabled);
    return changes;
  }

  async pendingCount() {
    const [row] = (await this.sql.unsafe("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'")) as {
      n: string;
    }[];
    return Number(row?.n ?? 0);
  }
}
