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
import { retried, transaction, typedParams, type PgDb } from "./connect.ts";
import type { PgEndpoints } from "./endpoints.ts";
import { afterTakingBack, SLOT_RELEASE, WORK_CHANNEL } from "./slots.ts";
import { isUnavailable } from "./unavailable.ts";

/**
 * Adds the due work (due_deliveries) of the pending deliveries copied in by a move from SQLite
 * (src/move), which copies the tables both backends have.
 */
export async function addDueWork(sql: Pick<SQL, "unsafe">): Promise<void> {
  await sql.unsafe(`INSERT INTO due_deliveries (delivery_id, endpoint_id, event_id, due_at)
    SELECT id, endpoint_id, event_id, coalesce(next_attempt_at, 0) FROM deliveries WHERE status = 'pending'`);
}

/**
 * The queue on PostgreSQL, which any number of instances work at once. A claim leases deliveries
 * in one short transaction (the switchboard_claim function) by writing them into their endpoint's
 * slots (endpoint_slots: at most `perEndpoint` live leases per endpoint across every instance),
 * each lease naming the instance that holds it; completions are fenced on the lease id; a lease
 * that runs out, or whose holder is taken for dead (see PgInstances), makes its delivery due
 * again. New work is told with pg_notify in the commit that makes it, and the dispatcher's tick is
 * the polling backstop. Enqueues and completions arriving in one turn of the event loop share one
 * commit (group commit).
 */
export class PgQueue implements DeliveryQueue {
  /** Every instance claims from the same queue. */
  readonly soleWorker = false;
  private readonly enqueues: GroupCommit<{ events: NewEvent[]; deliveries: NewDelivery[] }, void>;
  private readonly completions: GroupCommit<Completion, EndpointChange>;
  private readonly workListeners = new Set<() => void>();
  private workSubscription: { unlisten(): Promise<void> } | null = null;

  /** `listener`: see ChangeFeed's; `self`: the instance this process is (see PgInstances), which its leases name. */
  constructor(
    private readonly db: PgDb,
    private readonly listener: Pick<SQL, "listen">,
    private readonly endpoints: PgEndpoints,
    private readonly feed: ChangeFeed,
    private readonly self: string,
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
    this.workSubscription = await this.listener.listen(
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

  /**
   * Events, the message ids they mention and their deliveries in ONE statement (the
   * switchboard_enqueue function: one round trip, one commit), with the notification of new work
   * (on WORK_CHANNEL), on `sql` (a transaction's, when replays bring their audit entries). A shared
   * queue is never given leases (see NewDelivery).
   */
  private async insert(sql: Pick<SQL, "unsafe">, events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    const mentions = events.flatMap((e) =>
      (e.messages ?? []).map((m) => ({ ...m, eventId: e.id, accountId: e.accountId, at: e.receivedAt })),
    );
    await sql.unsafe(
      `SELECT switchboard_enqueue(${typedParams(
        "text[] text[] bigint[] bytea[] text[] text[] bool[]",
        "text[] text[] text[] text[] bigint[] text[] bigint[] text[]",
        "text[] text[] text[] text[] text[] text[] int[] bigint[]",
      )})`,
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
        deliveries.map((d) => d.replayOf),
        deliveries.map((d) => d.createdAt),
        deliveries.map((d) => d.signature),
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

  /**
   * Takes back the leases an earlier run of this instance held (it is gone: this process holds
   * its id now), and wakes every instance's claims. Other instances' leases are theirs: they are
   * taken back when their holder is taken for dead (PgInstances), or run out.
   */
  async recoverLeases(_now: number): Promise<void> {
    await this.sql.unsafe(
      `WITH freed AS (UPDATE endpoint_slots SET ${SLOT_RELEASE} WHERE holder = $1 RETURNING endpoint_id),
      ${afterTakingBack("freed")}
      SELECT count(*) FROM told`,
      [this.self],
    );
  }

  async claimDue(now: number, options: ClaimOptions): Promise<ClaimedDelivery[]> {
    const rows = (await retried(() =>
      this.sql.unsafe(`SELECT * FROM switchboard_claim(${typedParams("bigint text text bigint int int bigint")})`, [
        now,
        options.leaseId,
        this.self,
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
    const [row] = (await this.sql.unsafe("SELECT count(*) AS n FROM due_deliveries")) as {
      n: string;
    }[];
    return Number(row?.n ?? 0);
  }
}
