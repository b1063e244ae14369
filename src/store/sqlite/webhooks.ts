import type { Database, Statement } from "bun:sqlite";
import { asc, eq, sql } from "drizzle-orm";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Sealer } from "../../crypto/sealer.ts";
import { toEventMessage } from "../message-rows.ts";
import { EndpointOpener } from "../sealed-rows.ts";
import type { Retention } from "../types.ts";
import type {
  Attempt,
  ClaimedDelivery,
  ClaimOptions,
  Delivery,
  DeliveryEndpoint,
  DeliveryFilter,
  DeliveryStatus,
  Endpoint,
  EndpointChange,
  EndpointPatch,
  EndpointTarget,
  DeliverySearch,
  HourlyStats,
  MessageEvent,
  NewDelivery,
  NewEvent,
  WebhookStore,
} from "../webhooks.ts";
import { LAST_SUCCESS_RESOLUTION_MS } from "../webhooks.ts";
import type { Db } from "./open.ts";
import { endpoints } from "./schema.ts";

type Row = Record<string, unknown>;
type CompletionInput = Parameters<WebhookStore["completeAttempt"]>[0];
type TurnWork = {
  work: () => unknown;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
  urgent: boolean;
};
type TurnOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };
const HOUR = 3_600_000;
const hourOf = (at: number) => Math.floor(at / HOUR) * HOUR;
/** Deliveries purged per transaction: a few milliseconds of the server's thread (bench/webhooks/purge.ts). */
const PURGE_BATCH = 100;
/** Due deliveries counted per statement by pendingCount: a few milliseconds of the server's thread (bench/webhooks/pending.ts). */
export const COUNT_CHUNK = 20_000;

const DELIVERY_COLUMNS = `d.id, d.account_id, d.endpoint_id, d.event_id, d.status, d.attempt_count, d.next_attempt_at,
  d.replay_of, d.parked_reason, d.created_at, d.updated_at, e.fields AS event_fields, e.is_test,
  (e.body IS NOT NULL AND d.payload_deleted = 0) AS payload_available`;

function toDelivery(row: Row): Delivery {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    endpointId: row.endpoint_id as string,
    eventId: row.event_id as string,
    status: row.status as Delivery["status"],
    attemptCount: row.attempt_count as number,
    nextAttemptAt: row.next_attempt_at as number | null,
    replayOf: row.replay_of as string | null,
    parkedReason: row.parked_reason as Delivery["parkedReason"],
    payloadAvailable: row.payload_available === 1,
    fields: JSON.parse(row.event_fields as string) as string[],
    isTest: row.is_test === 1,
    createdAt: row.created_at as number,
    updatedAt: row.updated_at as number,
  };
}

function toAttempt(row: Row): Attempt {
  return {
    number: row.number as number,
    at: row.at as number,
    statusCode: row.status_code as number | null,
    error: row.error as string | null,
    responseExcerpt: row.response_excerpt as string | null,
    durationMs: row.duration_ms as number,
  };
}

/**
 * Endpoints go through drizzle's query builder; the queue's hot paths (enqueue, claim, complete)
 * are prepared once as plain SQL on the same connection, which is several times faster (BUN-NOTES).
 */
export class SqliteWebhooks implements WebhookStore {
  /** One server process per file (see server-lock.ts). */
  readonly soleWorker = true;
  private readonly stmt: Record<string, Statement>;
  private readonly pages: Record<DeliveryStatus | "all", Statement[]>;
  private readonly endpointById;

  /**
   * `durable` resolves once what was committed before the call is on disk (see wal-sync.ts); the
   * queue's new events wait for it before they are acknowledged.
   */
  constructor(
    private readonly db: Db,
    private readonly sqlite: Database,
    private readonly sealer: Sealer,
    private readonly durable: () => Promise<void>,
  ) {
    this.opener = new EndpointOpener(sealer);
    this.commitTurn = sqlite.transaction((batch: TurnWork[]) => batch.map(({ work }) => work()));
    this.commitAlone = sqlite.transaction((work: () => unknown) => work());
    const q = (text: string) => this.sqlite.prepare(text);
    const dueAfterCursor = `FROM deliveries INDEXED BY deliveries_due
      WHERE status = 'pending' AND lease_until IS NULL AND (endpoint_id, next_attempt_at, rowid) > ($endpoint, $due, $row)`;
    this.endpointById = db
      .select()
      .from(endpoints)
      .where(eq(endpoints.id, sql.placeholder("id")))
      .prepare();
    // One endpoint's page of deliveries; `created_at <= $beforeAt` lets the index start at the cursor.
    const page = (from: string, where: string) =>
      q(`SELECT ${DELIVERY_COLUMNS} FROM ${from} JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = $endpoint AND d.account_id = $account AND ${where}
        AND d.created_at <= $beforeAt AND (d.created_at < $beforeAt OR d.id < $beforeId)
      ORDER BY d.created_at DESC, d.id DESC LIMIT $limit`);
    // By status, each through the index that holds it (see schema.ts); a pending one is waiting
    // for its attempt, or leased (few: what this process has in flight or lined up).
    this.pages = {
      all: [page("deliveries d", "TRUE")],
      succeeded: [page("deliveries d", "d.status = 'succeeded'")],
      parked: [page("deliveries d INDEXED BY deliveries_parked", "d.status = 'parked'")],
      pending: [
        page("deliveries d INDEXED BY deliveries_waiting", "d.status = 'pending' AND d.lease_until IS NULL"),
        page("deliveries d INDEXED BY deliveries_lease", "d.lease_until IS NOT NULL AND d.status = 'pending'"),
      ],
    };
    this.stmt = {
      targets: q(
        "SELECT id, fields, phone_number_id FROM endpoints WHERE account_id = $account ORDER BY created_at, id",
      ),
      insertEvent: q(`INSERT INTO events (id, account_id, received_at, body, upstream_signature, fields, is_test)
        VALUES ($id, $account, $at, $body, $signature, $fields, $test)`),
      insertMessage:
        q(`INSERT INTO event_messages (event_id, account_id, message_id, phone_number_id, kind, status, error_code, received_at)
        VALUES ($event, $account, $message, $phone, $kind, $status, $error, $at)`),
      messageEvents:
        q(`SELECT event_id, message_id, phone_number_id, kind, status, error_code, received_at FROM event_messages
        WHERE account_id = $account AND message_id = $message ORDER BY received_at, seq`),
      eventDeliveries: q(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.event_id = $event ORDER BY d.created_at, d.id`,
      ),
      insertDelivery:
        q(`INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, attempt_count, next_attempt_at, lease_until, lease_id, replay_of, created_at, updated_at)
        VALUES ($id, $account, $endpoint, $event, 'pending', 0, COALESCE($leaseUntil, $next), $leaseUntil, $leaseId, $replayOf, $at, $at)`),
      // Endpoints with due work and room under the per-endpoint cap, oldest due first. Each probe
      // is an index look-up, so a claim costs O(endpoints) and never scans the backlog.
      claimable: q(`WITH busy AS (
          -- Without INDEXED BY the planner walks the whole table in endpoint order to skip a sort.
          SELECT endpoint_id, COUNT(*) AS n FROM deliveries INDEXED BY deliveries_lease WHERE lease_until > $now GROUP BY endpoint_id
        )
        SELECT id, busy FROM (
          SELECT e.id, COALESCE(b.n, 0) AS busy,
            (SELECT MIN(d.next_attempt_at) FROM deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.lease_until IS NULL) AS due
          FROM endpoints e LEFT JOIN busy b ON b.endpoint_id = e.id
        ) WHERE due <= $now AND busy < $perEndpoint ORDER BY due`),
      // A claimed delivery leaves deliveries_due, and its next_attempt_at moves to its lease's end,
      // when it comes due again if the lease runs out (expiredLeases). Ties go by rowid, which
      // deliveries_due holds in that order: ordering by id made SQLite sort the whole due backlog
      // of the endpoint at every claim (bench/RESULTS.md).
      // length() of a blob reads its size from the record, not its pages.
      dueOfEndpoint: q(`SELECT d.id, length(e.body) AS bytes FROM deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.endpoint_id = $endpoint AND d.status = 'pending' AND d.lease_until IS NULL AND d.next_attempt_at <= $now
        ORDER BY d.next_attempt_at, d.rowid LIMIT $limit`),
      lease: q(`UPDATE deliveries SET lease_until = $leaseUntil, lease_id = $leaseId, next_attempt_at = $leaseUntil
        WHERE id IN (SELECT value FROM json_each($ids))`),
      // An attempt that never recorded its end (it crashed) leaves its delivery leased: when the
      // lease runs out, the delivery goes back among the due ones.
      expiredLeases: q("UPDATE deliveries SET lease_until = NULL WHERE lease_until <= $now AND status = 'pending'"),
      // The claimed deliveries with their payloads, in one statement whatever their number.
      claimed: q(`SELECT ${DELIVERY_COLUMNS}, e.body, e.upstream_signature, d.payload_deleted
        FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id IN (SELECT value FROM json_each($ids))`),
      releaseAll: q(
        "UPDATE deliveries SET lease_until = NULL, next_attempt_at = $now WHERE lease_until IS NOT NULL AND status = 'pending'",
      ),
      insertAttempt:
        q(`INSERT INTO attempts (delivery_id, number, at, status_code, error, response_excerpt, duration_ms)
        VALUES ($delivery, $number, $at, $status, $error, $excerpt, $duration)`),
      updateDelivery:
        q(`UPDATE deliveries SET status = $status, attempt_count = attempt_count + $attempted, next_attempt_at = $next,
        lease_until = NULL, parked_reason = $reason, payload_deleted = (payload_deleted OR $deletePayload), updated_at = $now
        WHERE id = $id AND lease_id = $leaseId`),
      dropEventBody: q(`UPDATE events SET body = NULL WHERE id = (SELECT event_id FROM deliveries WHERE id = $delivery)
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = 'pending')`),
      // Skipped while it would change nothing but move last_success_at by under a second: at
      // thousands of successes a second it would dirty the endpoint's page in every commit.
      success: q(`UPDATE endpoints SET consecutive_failures = 0, last_success_at = $now, warned_at = NULL WHERE id = $id
        AND (consecutive_failures <> 0 OR warned_at IS NOT NULL OR last_success_at IS NULL OR last_success_at <= $now - ${LAST_SUCCESS_RESOLUTION_MS})`),
      failure: q(`UPDATE endpoints SET consecutive_failures = consecutive_failures + 1 WHERE id = $id
        RETURNING consecutive_failures, last_success_at, warned_at, enabled`),
      warn: q("UPDATE endpoints SET warned_at = $now WHERE id = $id"),
      disable: q("UPDATE endpoints SET enabled = 0, disabled_reason = $reason, updated_at = $now WHERE id = $id"),
      delivery: q(`SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $id`),
      attempts: q("SELECT * FROM attempts WHERE delivery_id = $id ORDER BY number, id"),
      eventBody: q("SELECT body FROM events WHERE id = $id"),
      countHour:
        q(`INSERT INTO endpoint_hours (endpoint_id, hour, succeeded, failed, parked) VALUES ($endpoint, $hour, $succeeded, $failed, $parked)
        ON CONFLICT DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed, parked = parked + excluded.parked`),
      hours: q(
        "SELECT hour, succeeded, failed, parked FROM endpoint_hours WHERE endpoint_id = $endpoint AND hour >= $since",
      ),
      // An hour goes once all of it is past the account's retention.
      purgeHours: q(`DELETE FROM endpoint_hours WHERE (endpoint_id, hour) IN (
        SELECT h.endpoint_id, h.hour FROM accounts a CROSS JOIN endpoints p ON p.account_id = a.id CROSS JOIN endpoint_hours h ON h.endpoint_id = p.id
        WHERE h.hour + ${HOUR} <= $now - CASE a.retention WHEN '7d' THEN $week ELSE $day END)`),
      // Every pending delivery is in exactly one of the two partial indexes: due (waiting for an
      // attempt), or leased (few: what this process has in flight or lined up). The due ones can be
      // millions during a long outage, so they are counted a chunk at a time along deliveries_due,
      // from a cursor (its key: endpoint, due time, rowid) past the last chunk.
      dueChunkEnd: q(`SELECT endpoint_id AS endpoint, next_attempt_at AS due, rowid AS row ${dueAfterCursor}
        ORDER BY endpoint_id, next_attempt_at, rowid LIMIT 1 OFFSET ${COUNT_CHUNK - 1}`),
      dueRest: q(`SELECT COUNT(*) AS n ${dueAfterCursor}`),
      leasedPending: q(
        "SELECT COUNT(*) AS n FROM deliveries INDEXED BY deliveries_lease WHERE lease_until IS NOT NULL AND status = 'pending'",
      ),
      // Endpoint by endpoint (CROSS JOIN keeps that order), so each reads only its expired range.
      purgeDeliveries: q(`DELETE FROM deliveries WHERE rowid IN (
        SELECT d.rowid FROM accounts a CROSS JOIN endpoints p ON p.account_id = a.id CROSS JOIN deliveries d ON d.endpoint_id = p.id
        WHERE d.created_at < $now - CASE a.retention WHEN '7d' THEN $week ELSE $day END LIMIT ${PURGE_BATCH}) RETURNING event_id`),
      // An event lives as long as one of its deliveries (replays included) does.
      dropOrphanEvent: q(
        "DELETE FROM events WHERE id = $event AND NOT EXISTS (SELECT 1 FROM deliveries WHERE event_id = $event)",
      ),
      eventsOfEndpoint: q("SELECT DISTINCT event_id FROM deliveries WHERE endpoint_id = $endpoint"),
      stopSending: q("UPDATE endpoints SET enabled = 0 WHERE id = $id"),
      deliveriesOfEndpoint:
        q(`DELETE FROM deliveries WHERE rowid IN (SELECT rowid FROM deliveries WHERE endpoint_id = $endpoint LIMIT ${PURGE_BATCH})
        RETURNING event_id`),
    };
    const deleting = (statement: Statement) =>
      sqlite.transaction((params: Record<string, string | number>) => {
        const gone = statement.all(params) as Row[];
        return { deliveries: gone.length, events: this.dropOrphanEvents(gone.map((row) => row.event_id as string)) };
      });
    this.purgeBatch = deleting(this.stmt.purgeDeliveries!);
    this.deleteBatch = deleting(this.stmt.deliveriesOfEndpoint!);
  }

  private readonly opener: EndpointOpener;

  /** Ingress's targets and attempts' endpoints are kept in memory: this process is the only writer of endpoints. */
  private readonly targetsByAccount = new Map<string, EndpointTarget[]>();
  private readonly deliveryEndpoints = new Map<string, DeliveryEndpoint>();

  /** Drops what is kept in memory of an endpoint that changed. */
  private forget(id: string): void {
    this.targetsByAccount.clear();
    this.deliveryEndpoints.delete(id);
  }

  async createEndpoint(endpoint: Endpoint) {
    this.targetsByAccount.delete(endpoint.accountId);
    const { secret, previousSecret, ...rest } = endpoint;
    this.db
      .insert(endpoints)
      .values({
        ...rest,
        secretEnc: this.sealer.seal(secret),
        previousSecretEnc: previousSecret === null ? null : this.sealer.seal(previousSecret),
      })
      .run();
    return { ...endpoint };
  }
  async endpoint(id: string) {
    const row = this.endpointById.get({ id });
    return row ? this.opener.endpoint(row) : undefined;
  }
  async endpoints(accountId: string) {
    return this.db
      .select()
      .from(endpoints)
      .where(eq(endpoints.accountId, accountId))
      .orderBy(asc(endpoints.createdAt), asc(endpoints.id))
      .all()
      .map((row) => this.opener.endpoint(row));
  }
  targets(accountId: string): EndpointTarget[] {
    let list = this.targetsByAccount.get(accountId);
    if (list === undefined) {
      list = this.stmt.targets!.all({ account: accountId }).map((row) => {
        const r = row as Row;
        return {
          id: r.id as string,
          fields: JSON.parse(r.fields as string) as string[],
          phoneNumberId: r.phone_number_id as string | null,
        };
      });
      this.targetsByAccount.set(accountId, list);
    }
    return list;
  }
  private deliveryEndpointNow(id: string): DeliveryEndpoint | undefined {
    let endpoint = this.deliveryEndpoints.get(id);
    if (endpoint === undefined) {
      const row = this.endpointById.get({ id });
      if (!row) return undefined;
      endpoint = this.opener.deliveryEndpoint(row);
      this.deliveryEndpoints.set(id, endpoint);
    }
    return endpoint;
  }
  async deliveryEndpoint(id: string) {
    return this.deliveryEndpointNow(id);
  }
  async updateEndpoint(id: string, patch: EndpointPatch) {
    const { secret, previousSecret, ...rest } = patch;
    const row: Partial<typeof endpoints.$inferInsert> = Object.fromEntries(
      Object.entries(rest).filter(([, v]) => v !== undefined),
    );
    if (secret !== undefined) row.secretEnc = this.sealer.seal(secret);
    if (previousSecret !== undefined)
      row.previousSecretEnc = previousSecret === null ? null : this.sealer.seal(previousSecret);
    const changed = this.db.update(endpoints).set(row).where(eq(endpoints.id, id)).returning().get();
    this.forget(id);
    return changed ? this.opener.endpoint(changed) : undefined;
  }
  async deleteEndpoint(id: string) {
    // Nothing more is sent to it meanwhile: an attempt starting now finds it disabled and parks.
    this.stmt.stopSending!.run({ id });
    this.forget(id);
    // Its deliveries first, in batches as the purge takes them: all in one transaction, a busy
    // endpoint's would hold the thread for seconds (8.5 us each).
    await this.inBatches(() => this.deleteBatch({ endpoint: id }));
    // Those stored since go with it (foreign key); so do the events no other delivery needs.
    const deleted = this.sqlite.transaction(() => {
      const events = (this.stmt.eventsOfEndpoint!.all({ endpoint: id }) as Row[]).map((row) => row.event_id as string);
      const gone =
        this.db.delete(endpoints).where(eq(endpoints.id, id)).returning({ id: endpoints.id }).all().length > 0;
      this.dropOrphanEvents(events);
      return gone;
    })();
    // An attempt that started meanwhile read it again.
    this.forget(id);
    return deleted;
  }

  enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    return this.inTurnTransaction(() => {
      for (const e of events) {
        this.stmt.insertEvent!.run({
          id: e.id,
          account: e.accountId,
          at: e.receivedAt,
          body: e.body,
          signature: e.upstreamSignature,
          fields: JSON.stringify(e.fields),
          test: e.isTest ? 1 : 0,
        });
        for (const m of e.messages ?? []) {
          this.stmt.insertMessage!.run({
            event: e.id,
            account: e.accountId,
            message: m.messageId,
            phone: m.phoneNumberId,
            kind: m.kind,
            status: m.status,
            error: m.errorCode,
            at: e.receivedAt,
          });
        }
      }
      for (const d of deliveries) {
        this.stmt.insertDelivery!.run({
          id: d.id,
          account: d.accountId,
          endpoint: d.endpointId,
          event: d.eventId,
          next: d.nextAttemptAt,
          leaseUntil: d.lease?.until ?? null,
          leaseId: d.lease?.id ?? null,
          replayOf: d.replayOf,
          at: d.createdAt,
        });
      }
    }, true);
  }

  claimDue(now: number, options: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.inTurnTransaction(() => {
      const claimed: ClaimedDelivery[] = [];
      const ids: string[] = [];
      let bytes = 0;
      this.stmt.expiredLeases!.run({ now });
      const candidates = this.stmt.claimable!.all({ now, perEndpoint: options.perEndpoint }) as Row[];
      claiming: for (const candidate of candidates) {
        const room = Math.min(options.perEndpoint - (candidate.busy as number), options.limit - ids.length);
        if (room <= 0) break;
        for (const due of this.stmt.dueOfEndpoint!.all({
          endpoint: candidate.id as string,
          now,
          limit: room,
        }) as Row[]) {
          const size = (due.bytes as number | null) ?? 0;
          // The first always goes, so that a body larger than the bound is delivered too.
          if (ids.length > 0 && bytes + size > options.maxBytes) break claiming;
          bytes += size;
          ids.push(due.id as string);
        }
      }
      if (ids.length === 0) return claimed;
      const list = JSON.stringify(ids);
      this.stmt.lease!.run({ ids: list, leaseUntil: now + options.leaseMs, leaseId: options.leaseId });
      // In the order they were claimed (oldest due first), not the order the look-up found them.
      const order = new Map(ids.map((id, i) => [id, i]));
      const rows = this.stmt.claimed!.all({ ids: list }) as Row[];
      rows.sort((a, b) => order.get(a.id as string)! - order.get(b.id as string)!);
      // An event's deliveries to several endpoints share one copy of its body.
      const bodies = new Map<string, Uint8Array>();
      for (const row of rows) {
        const delivery = toDelivery(row);
        const endpoint = this.deliveryEndpointNow(delivery.endpointId);
        if (!endpoint) continue;
        let body: Uint8Array | null = null;
        if (row.body !== null && row.payload_deleted !== 1) {
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
    });
  }

  /** Nothing else queues work on this file: see soleWorker. */
  onNewWork(): () => void {
    return () => {};
  }

  /** One server process owns a SQLite file, so at start every lease belongs to a run that ended. */
  async recoverLeases(now: number) {
    this.stmt.releaseAll!.run({ now });
  }

  private turnWork: TurnWork[] = [];
  private readonly commitTurn: (batch: TurnWork[]) => unknown[];
  private readonly commitAlone: (work: () => unknown) => unknown;
  /** Each deletes up to PURGE_BATCH deliveries, and the events they leave orphaned, in one transaction. */
  private readonly purgeBatch: (params: Record<string, number>) => { deliveries: number; events: number };
  private readonly deleteBatch: (params: { endpoint: string }) => { deliveries: number; events: number };

  /**
   * Group commit: the queue's writes (enqueue, claim, complete) that arrive in the same turn of the
   * event loop share ONE transaction, and each promise resolves only once that commit is done, so
   * "durable when resolved" still holds. A commit writes every touched page to the WAL, which cost
   * more than the statements themselves. A piece of work that throws rolls the whole turn back;
   * the pieces are then redone each in its own transaction, so it alone is rejected (a savepoint
   * per piece would do the same without the redo, but journals every page each piece touches).
   * `urgent` work (enqueue: a caller is waiting to acknowledge) resolves once the commit is also on
   * disk (`durable`), safe from a power cut and not only from the process dying; the rest of its
   * turn after it, and a turn with no urgent work once committed (an attempt record lost to a
   * power cut means one more attempt, which at-least-once allows). The rest always resolves on a
   * later turn than the urgent work, so that what it goes on to do (start the next attempts) runs
   * after the answers are written and after requests that arrived meanwhile.
   */
  private inTurnTransaction<T>(work: () => T, urgent = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.turnWork.push({ work, resolve: resolve as (value: never) => void, reject, urgent }) === 1)
        setImmediate(() => this.flushTurn());
    });
  }

  private flushTurn(): void {
    const batch = this.turnWork.splice(0);
    let outcomes: TurnOutcome[];
    try {
      outcomes = this.commitTurn(batch).map((value) => ({ ok: true, value }));
    } catch {
      outcomes = batch.map((item) => {
        try {
          return { ok: true, value: this.commitAlone(item.work) };
        } catch (error) {
          return { ok: false, error };
        }
      });
    }
    const settle = (i: number) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) batch[i]!.resolve(outcome.value as never);
      else batch[i]!.reject(outcome.error);
    };
    const urgent: number[] = [];
    const later: number[] = [];
    batch.forEach((item, i) => (item.urgent ? urgent : later).push(i));
    const settleLater = () => {
      if (later.length > 0) setImmediate(() => later.forEach(settle));
    };
    if (urgent.length === 0) return settleLater();
    this.durable()
      .then(
        () => urgent.forEach(settle),
        // Committed, but perhaps not on disk: not to be acknowledged.
        (error) => urgent.forEach((i) => (outcomes[i]!.ok ? batch[i]!.reject(error) : settle(i))),
      )
      .finally(settleLater);
  }

  /**
   * Records the attempt in the transaction of this turn: attempts finishing together share one
   * commit, and each promise resolves once that commit is done.
   */
  completeAttempt(input: CompletionInput): Promise<EndpointChange> {
    return this.inTurnTransaction(() => this.applyCompletion(input));
  }

  private applyCompletion(input: CompletionInput): EndpointChange {
    const { now, rules } = input;
    const change: EndpointChange = { consecutiveFailures: 0, warned: false, disabled: null };
    const a = input.attempt;
    const next = input.next;
    const updated = this.stmt.updateDelivery!.run({
      id: input.deliveryId,
      leaseId: input.leaseId,
      status: next.status,
      attempted: a ? 1 : 0,
      next: next.status === "pending" ? next.nextAttemptAt : null,
      reason: next.status === "parked" ? next.reason : null,
      deletePayload: input.deletePayload ? 1 : 0,
      now,
    });
    // The delivery went while its attempt ran (its endpoint was deleted, or retention purged it), or
    // its lease ran out and another claim holds it now: there is nothing to record this against,
    // nor an endpoint whose health it would change.
    if (updated.changes === 0) return change;
    if (input.deletePayload) this.stmt.dropEventBody!.run({ delivery: input.deliveryId });
    if (a) {
      this.stmt.insertAttempt!.run({
        delivery: input.deliveryId,
        number: a.number,
        at: a.at,
        status: a.statusCode,
        error: a.error,
        excerpt: a.responseExcerpt,
        duration: a.durationMs,
      });
      // An attempt's effect is "success" exactly when classify() found a 2xx.
      const ok = input.effect === "success";
      this.countHour(input.endpointId, a.at, { succeeded: ok ? 1 : 0, failed: ok ? 0 : 1, parked: 0 });
    }
    if (next.status === "parked") this.countHour(input.endpointId, now, { succeeded: 0, failed: 0, parked: 1 });
    if (input.effect === "success") {
      this.stmt.success!.run({ id: input.endpointId, now });
    } else if (input.effect === "failure" || input.effect === "gone") {
      const ep = this.stmt.failure!.get({ id: input.endpointId }) as Row | null;
      if (!ep) return change;
      const count = ep.consecutive_failures as number;
      change.consecutiveFailures = count;
      if (ep.enabled !== 1) return change;
      if (input.effect === "gone") {
        change.disabled = "gone";
      } else {
        const lastSuccess = ep.last_success_at as number | null;
        // last_success_at may lag the real last success by under LAST_SUCCESS_RESOLUTION_MS: the
        // window is widened by as much, so an endpoint is never disabled early.
        const quietSince = now - rules.quietMs - LAST_SUCCESS_RESOLUTION_MS;
        if (count >= rules.disableAt && (lastSuccess === null || lastSuccess <= quietSince))
          change.disabled = "consecutive_failures";
        else if (count >= rules.warnAt && ep.warned_at === null) change.warned = true;
      }
      if (change.disabled) {
        this.stmt.disable!.run({ id: input.endpointId, reason: change.disabled, now });
        this.forget(input.endpointId);
      }
      if (change.warned) this.stmt.warn!.run({ id: input.endpointId, now });
    }
    return change;
  }

  async delivery(id: string) {
    const row = this.stmt.delivery!.get({ id }) as Row | null;
    return row ? toDelivery(row) : undefined;
  }
  async attempts(deliveryId: string) {
    return (this.stmt.attempts!.all({ id: deliveryId }) as Row[]).map(toAttempt);
  }
  /**
   * Deliveries are indexed by endpoint only (an index by account would be one more page written per
   * account at every commit of the queue), so an account's list merges one page per endpoint: every
   * delivery belongs to an endpoint of its account, and goes when the endpoint does.
   */
  async deliveries(filter: DeliveryFilter) {
    if (filter.search) return this.searchDeliveries(filter, filter.search);
    const endpointIds =
      filter.endpointId !== undefined ? [filter.endpointId] : this.targets(filter.accountId).map((t) => t.id);
    const pages = this.pages[filter.status ?? "all"];
    const rows = endpointIds.flatMap((endpoint) =>
      pages.flatMap(
        (statement) =>
          statement.all({
            account: filter.accountId,
            endpoint,
            beforeAt: filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
            beforeId: filter.before?.id ?? "",
            limit: filter.limit,
          }) as Row[],
      ),
    );
    if (endpointIds.length * pages.length > 1) {
      rows.sort(
        (a, b) =>
          (b.created_at as number) - (a.created_at as number) ||
          (a.id === b.id ? 0 : (a.id as string) < (b.id as string) ? 1 : -1),
      );
    }
    return rows.slice(0, filter.limit).map(toDelivery);
  }
  /** A search beyond endpoint and status: one statement built for the criteria given (see DeliverySearch). */
  private searchDeliveries(filter: DeliveryFilter, search: DeliverySearch): Delivery[] {
    const where = [
      "d.account_id = $account",
      "(d.created_at < $beforeAt OR (d.created_at = $beforeAt AND d.id < $beforeId))",
    ];
    const params: Record<string, string | number> = {
      account: filter.accountId,
      beforeAt: filter.before?.createdAt ?? Number.MAX_SAFE_INTEGER,
      beforeId: filter.before?.id ?? "\u{10FFFF}",
      limit: filter.limit,
    };
    const add = (condition: string, name: string, value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(condition);
      params[name] = value;
    };
    add("d.endpoint_id = $endpoint", "endpoint", filter.endpointId);
    add("d.status = $status", "status", filter.status);
    add("d.created_at >= $from", "from", search.from);
    add("d.created_at < $to", "to", search.to);
    add("EXISTS (SELECT 1 FROM json_each(e.fields) f WHERE f.value = $field)", "field", search.field);
    add(
      "EXISTS (SELECT 1 FROM event_messages m WHERE m.event_id = d.event_id AND m.phone_number_id = $number)",
      "number",
      search.phoneNumberId,
    );
    add(
      "EXISTS (SELECT 1 FROM event_messages m WHERE m.event_id = d.event_id AND m.message_id = $message)",
      "message",
      search.messageId,
    );
    add(
      "(SELECT a.status_code FROM attempts a WHERE a.delivery_id = d.id ORDER BY a.number DESC LIMIT 1) = $code",
      "code",
      search.lastStatusCode,
    );
    const rows = this.sqlite
      .prepare(`SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE ${where.join(" AND ")} ORDER BY d.created_at DESC, d.id DESC LIMIT $limit`)
      .all(params) as Row[];
    return rows.map(toDelivery);
  }

  async parkedSince(
    endpointId: string,
    since: number,
    until: number,
    after: { createdAt: number; id: string } | null,
    limit: number,
  ) {
    const rows = this.sqlite
      .prepare(`SELECT ${DELIVERY_COLUMNS}, EXISTS (SELECT 1 FROM deliveries r WHERE r.replay_of = d.id) AS replayed
      FROM deliveries d INDEXED BY deliveries_parked JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = $endpoint AND d.status = 'parked' AND d.created_at >= $since AND d.created_at <= $until
        AND (d.created_at > $afterAt OR (d.created_at = $afterAt AND d.id > $afterId))
      ORDER BY d.created_at, d.id LIMIT $limit`)
      .all({
        endpoint: endpointId,
        since,
        until,
        afterAt: after?.createdAt ?? -1,
        afterId: after?.id ?? "",
        limit,
      }) as Row[];
    return rows.map((row) => ({ delivery: toDelivery(row), replayed: row.replayed === 1 }));
  }

  async mentionsOf(eventIds: string[]) {
    if (eventIds.length === 0) return [];
    return (
      this.sqlite
        .prepare(`SELECT event_id, message_id, phone_number_id, kind, status, error_code, received_at FROM event_messages
      WHERE event_id IN (SELECT value FROM json_each($ids)) ORDER BY seq`)
        .all({ ids: JSON.stringify(eventIds) }) as Row[]
    ).map(toEventMessage);
  }

  async messageEvents(accountId: string, messageId: string): Promise<MessageEvent[]> {
    return (this.stmt.messageEvents!.all({ account: accountId, message: messageId }) as Row[]).map((row) => ({
      ...toEventMessage(row),
      deliveries: (this.stmt.eventDeliveries!.all({ event: row.event_id as string }) as Row[]).map(toDelivery),
    }));
  }
  async eventBody(eventId: string) {
    const row = this.stmt.eventBody!.get({ id: eventId }) as Row | null;
    return row && row.body !== null ? new Uint8Array(row.body as Uint8Array) : null;
  }
  private countHour(endpointId: string, at: number, counts: Omit<HourlyStats, "hour">): void {
    this.stmt.countHour!.run({ endpoint: endpointId, hour: hourOf(at), ...counts });
  }

  async hourlyStats(endpointId: string, since: number, now: number): Promise<HourlyStats[]> {
    const first = hourOf(since);
    const buckets = new Map<number, HourlyStats>();
    for (let hour = first; hour <= now; hour += HOUR) buckets.set(hour, { hour, succeeded: 0, failed: 0, parked: 0 });
    for (const row of this.stmt.hours!.all({ endpoint: endpointId, since: first }) as Row[]) {
      const b = buckets.get(row.hour as number);
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
    let count = 0;
    // Before every key: endpoint ids are never empty.
    let after: Row = { endpoint: "", due: 0, row: 0 };
    for (;;) {
      const end = this.stmt.dueChunkEnd!.get(after) as Row | null;
      if (end === null) break;
      count += COUNT_CHUNK;
      after = end;
      // Requests that came meanwhile are answered between chunks, as between purge batches.
      await nextTurn();
    }
    count += (this.stmt.dueRest!.get(after) as Row).n as number;
    return count + ((this.stmt.leasedPending!.get() as Row).n as number);
  }

  async purgeExpired(now: number, retentionMs: Record<Retention, number>) {
    const params = { now, day: retentionMs["24h"], week: retentionMs["7d"] };
    const removed = await this.inBatches(() => this.purgeBatch(params));
    this.stmt.purgeHours!.run(params);
    return removed;
  }

  /**
   * Runs `batch` (a purgeBatch or deleteBatch) until it deletes fewer than PURGE_BATCH deliveries,
   * answering the requests that came meanwhile between batches: a minute of deliveries at a few
   * thousand a second, deleted at once, held the thread for seconds. Returns what all removed.
   */
  private async inBatches(
    batch: () => { deliveries: number; events: number },
  ): Promise<{ deliveries: number; events: number }> {
    const removed = { deliveries: 0, events: 0 };
    for (;;) {
      const done = batch();
      removed.deliveries += done.deliveries;
      removed.events += done.events;
      if (done.deliveries < PURGE_BATCH) return removed;
      await nextTurn();
    }
  }

  /** Deletes those of these events that no delivery refers to any more; returns how many. */
  private dropOrphanEvents(eventIds: string[]): number {
    let dropped = 0;
    for (const event of new Set(eventIds)) dropped += this.stmt.dropOrphanEvent!.run({ event }).changes;
    return dropped;
  }
}
