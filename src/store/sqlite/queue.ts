import type { Database } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import { claimedDeliveries, DELIVERY_COLUMNS, type Row } from "../delivery-rows.ts";
import { GroupCommit, type Done } from "../group-commit.ts";
import type {
  ClaimedDelivery,
  ClaimOptions,
  Completion,
  DeliveryQueue,
  EndpointChange,
  NewDelivery,
  NewEvent,
} from "../queue.ts";
import type { AuditWriter } from "./audit.ts";
import { SqliteCompletions } from "./completions.ts";
import type { SqliteEndpoints } from "./endpoints.ts";
import { statement } from "./open.ts";

/** Due deliveries counted per statement by pendingCount: a few milliseconds of the server's thread (bench/webhooks/pending.ts). */
export const COUNT_CHUNK = 20_000;

type DueKey = { endpoint: string; due: number; row: number };

function prepare(sqlite: Database) {
  const dueAfterKey = `FROM deliveries INDEXED BY deliveries_due
    WHERE status = 'pending' AND lease_until IS NULL AND (endpoint_id, next_attempt_at, rowid) > ($endpoint, $due, $row)`;
  return {
    insertEvent: statement(
      sqlite,
      `INSERT INTO events (id, account_id, received_at, body, upstream_signature, fields, is_test)
      VALUES ($id, $account, $at, $body, $signature, $fields, $test)`,
    ),
    insertMessage: statement(
      sqlite,
      `INSERT INTO event_messages (event_id, account_id, message_id, phone_number_id, kind, status,
      error_code, received_at) VALUES ($event, $account, $message, $phone, $kind, $status, $error, $at)`,
    ),
    insertDelivery: statement(
      sqlite,
      `INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, attempt_count,
      next_attempt_at, lease_until, lease_id, replay_of, signature, created_at, updated_at)
      VALUES ($id, $account, $endpoint, $event, 'pending', 0, COALESCE($leaseUntil, $next), $leaseUntil, $leaseId, $replayOf, $signature, $at, $at)`,
    ),
    // Endpoints with due work and room under the per-endpoint cap, oldest due first. Each probe
    // is an index look-up, so a claim costs O(endpoints) and never scans the backlog.
    claimable: statement<{ id: string; busy: number }>(
      sqlite,
      `WITH busy AS (
        -- Without INDEXED BY the planner walks the whole table in endpoint order to skip a sort.
        SELECT endpoint_id, COUNT(*) AS n FROM deliveries INDEXED BY deliveries_lease WHERE lease_until > $now GROUP BY endpoint_id
      )
      SELECT id, busy FROM (
        SELECT e.id, COALESCE(b.n, 0) AS busy,
          (SELECT MIN(d.next_attempt_at) FROM deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.lease_until IS NULL) AS due
        FROM endpoints e LEFT JOIN busy b ON b.endpoint_id = e.id
      ) WHERE due <= $now AND busy < $perEndpoint ORDER BY due`,
    ),
    // A claimed delivery leaves deliveries_due, and its next_attempt_at moves to its lease's end,
    // when it comes due again if the lease runs out (expiredLeases). Ties go by rowid, which
    // deliveries_due holds in that order: ordering by id made SQLite sort the whole due backlog
    // of the endpoint at every claim (bench/RESULTS.md).
    // length() of a blob reads its size from the record, not its pages.
    dueOfEndpoint: statement<{ id: string; bytes: number | null }>(
      sqlite,
      `SELECT d.id, length(e.body) AS bytes
      FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = $endpoint AND d.status = 'pending' AND d.lease_until IS NULL AND d.next_attempt_at <= $now
      ORDER BY d.next_attempt_at, d.rowid LIMIT $limit`,
    ),
    lease: statement(
      sqlite,
      `UPDATE deliveries SET lease_until = $leaseUntil, lease_id = $leaseId, next_attempt_at = $leaseUntil
      WHERE id IN (SELECT value FROM json_each($ids))`,
    ),
    // An attempt that never recorded its end (it crashed) leaves its delivery leased: when the
    // lease runs out, the delivery goes back among the due ones.
    expiredLeases: statement(
      sqlite,
      "UPDATE deliveries SET lease_until = NULL WHERE lease_until <= $now AND status = 'pending'",
    ),
    // The claimed deliveries with their payloads, in one statement whatever their number.
    claimed: statement<Row & { id: string }>(
      sqlite,
      `SELECT ${DELIVERY_COLUMNS}, e.body, e.upstream_signature
      FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id IN (SELECT value FROM json_each($ids))`,
    ),
    releaseAll: statement(
      sqlite,
      `UPDATE deliveries SET lease_until = NULL, next_attempt_at = $now
      WHERE lease_until IS NOT NULL AND status = 'pending'`,
    ),
    // Every pending delivery is in exactly one of the two partial indexes: due (waiting for an
    // attempt), or leased (few: what this process has in flight or lined up). The due ones can be
    // millions during a long outage, so they are counted a chunk at a time along deliveries_due,
    // from a key (endpoint, due time, rowid) past the last chunk.
    dueChunkEnd: statement<DueKey, DueKey>(
      sqlite,
      `SELECT endpoint_id AS endpoint, next_attempt_at AS due, rowid AS row ${dueAfterKey}
      ORDER BY endpoint_id, next_attempt_at, rowid LIMIT 1 OFFSET ${COUNT_CHUNK - 1}`,
    ),
    dueRest: statement<{ n: number }, DueKey>(sqlite, `SELECT COUNT(*) AS n ${dueAfterKey}`),
    leasedPending: sqlite.prepare<{ n: number }, []>(`SELECT COUNT(*) AS n FROM deliveries INDEXED BY deliveries_lease
      WHERE lease_until IS NOT NULL AND status = 'pending'`),
  };
}

type TurnWork = { work: () => unknown; urgent: boolean };

const settleAll = (batch: Done<TurnWork, unknown>[]) => {
  for (const d of batch) d.settle();
};

/**
 * The queue on SQLite: one server process works the file (see server-lock.ts), so it is the sole
 * worker. Its hot paths (enqueue, claim, complete) are prepared once as plain SQL on the
 * connection, and share one transaction per turn of the event loop (group commit).
 */
export class SqliteQueue implements DeliveryQueue {
  readonly soleWorker = true;
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly completions: SqliteCompletions;
  private readonly turns: GroupCommit<TurnWork, unknown>;

  /**
   * `durable` resolves once what was committed before the call is on disk (see wal-sync.ts); the
   * queue's new events wait for it before they are acknowledged.
   */
  constructor(
    sqlite: Database,
    private readonly endpoints: SqliteEndpoints,
    private readonly durable: () => Promise<void>,
    private readonly audit: AuditWriter,
  ) {
    this.stmt = prepare(sqlite);
    this.completions = new SqliteCompletions(sqlite, endpoints, audit);
    this.turns = new GroupCommit({
      commit: sqlite.transaction((batch: TurnWork[]) => batch.map(({ work }) => work())),
      settle: (batch) => this.settleTurn(batch),
    });
  }

  /**
   * Runs `work` in the transaction of this turn (see GroupCommit): the queue's writes that arrive
   * in the same turn share ONE commit, and each promise resolves only once that commit is done, so
   * "durable when resolved" still holds. A commit writes every touched page to the WAL, which cost
   * more than the statements themselves. Work that throws rolls the whole turn back, and the
   * pieces are redone each in its own transaction, so it alone is rejected (a savepoint per piece
   * would do the same without the redo, but journals every page each piece touches).
   */
  private inTurn<T>(work: () => T, urgent = false): Promise<T> {
    return this.turns.run({ work, urgent }) as Promise<T>;
  }

  /**
   * When each is answered: `urgent` work (enqueue: a caller is waiting to acknowledge) once the
   * commit is also on disk (`durable`), safe from a power cut and not only from the process dying;
   * the rest of its turn after it, and a turn with no urgent work once committed (an attempt record
   * lost to a power cut means one more attempt, which at-least-once allows). The rest always
   * resolves on a later turn than the urgent work, so that what it goes on to do (start the next
   * attempts) runs after the answers are written and after requests that arrived meanwhile.
   */
  private settleTurn(batch: Done<TurnWork, unknown>[]): void {
    const urgent = batch.filter((d) => d.input.urgent);
    const later = batch.filter((d) => !d.input.urgent);
    const settleLater = () => {
      if (later.length > 0) setImmediate(() => settleAll(later));
    };
    if (urgent.length === 0) {
      settleLater();
      return;
    }
    this.durable()
      .then(
        () => settleAll(urgent),
        // Committed, but perhaps not on disk: not to be acknowledged.
        (error) => {
          for (const d of urgent) {
            if (d.outcome.ok) d.reject(error);
            else d.settle();
          }
        },
      )
      .finally(settleLater);
  }

  /** Nothing else queues work on this file: see soleWorker. */
  onNewWork(): () => void {
    return () => {};
  }

  enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    return this.inTurn(() => {
      for (const e of events) {
        this.stmt.insertEvent.run({
          id: e.id,
          account: e.accountId,
          at: e.receivedAt,
          body: e.body,
          signature: e.upstreamSignature,
          fields: JSON.stringify(e.fields),
          test: e.isTest ? 1 : 0,
        });
        for (const m of e.messages ?? []) {
          this.stmt.insertMessage.run({
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
        this.stmt.insertDelivery.run({
          id: d.id,
          account: d.accountId,
          endpoint: d.endpointId,
          event: d.eventId,
          next: d.nextAttemptAt,
          leaseUntil: d.lease?.until ?? null,
          leaseId: d.lease?.id ?? null,
          replayOf: d.replayOf,
          signature: d.signature,
          at: d.createdAt,
        });
        this.audit.record(d.audit);
      }
    }, true);
  }

  /** One server process owns a SQLite file, so at start every lease belongs to a run that ended. */
  async recoverLeases(now: number) {
    this.stmt.releaseAll.run({ now });
  }

  claimDue(now: number, options: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.inTurn(() => {
      this.stmt.expiredLeases.run({ now });
      const ids = this.dueIds(now, options);
      if (ids.length === 0) return [];
      const list = JSON.stringify(ids);
      this.stmt.lease.run({ ids: list, leaseUntil: now + options.leaseMs, leaseId: options.leaseId });
      // In the order they were claimed (oldest due first), not the order the look-up found them.
      const order = new Map(ids.map((id, i) => [id, i]));
      const rank = (id: string) => order.get(id) ?? 0;
      const rows = this.stmt.claimed.all({ ids: list }).sort((a, b) => rank(a.id) - rank(b.id));
      return claimedDeliveries(rows, options.leaseId, (id) => this.endpoints.forDeliveryNow(id));
    });
  }

  /** The due deliveries a claim takes, in claim order: endpoints with room, oldest due first, within the bounds. */
  private dueIds(now: number, options: ClaimOptions): string[] {
    const ids: string[] = [];
    let bytes = 0;
    for (const candidate of this.stmt.claimable.all({ now, perEndpoint: options.perEndpoint })) {
      const room = Math.min(options.perEndpoint - candidate.busy, options.limit - ids.length);
      if (room <= 0) break;
      for (const due of this.stmt.dueOfEndpoint.all({ endpoint: candidate.id, now, limit: room })) {
        const size = due.bytes ?? 0;
        // The first always goes, so that a body larger than the bound is delivered too.
        if (ids.length > 0 && bytes + size > options.maxBytes) return ids;
        bytes += size;
        ids.push(due.id);
      }
    }
    return ids;
  }

  /**
   * Records the attempt in the transaction of this turn: attempts finishing together share one
   * commit, and each promise resolves once that commit is done.
   */
  completeAttempt(completion: Completion): Promise<EndpointChange> {
    return this.inTurn(() => this.completions.record(completion));
  }

  async pendingCount() {
    let count = 0;
    // Before every key: endpoint ids are never empty.
    let after: DueKey = { endpoint: "", due: 0, row: 0 };
    for (;;) {
      const end = this.stmt.dueChunkEnd.get(after);
      if (end === null) break;
      count += COUNT_CHUNK;
      after = end;
      // Requests that came meanwhile are answered between chunks, as between purge batches.
      await nextTurn();
    }
    count += this.stmt.dueRest.get(after)?.n ?? 0;
    return count + (this.stmt.leasedPending.get()?.n ?? 0);
  }
}
