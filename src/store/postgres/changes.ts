import type { SQL } from "bun";
import type { PgDb, Tx } from "./connect.ts";

/** What instances keep in memory and must hear about when another instance changes it. */
export type ChangeKind = "account" | "api_key" | "waba" | "number" | "endpoint";

const CHANNEL = "switchboard_changes";
/**
 * How long refresh() lets notifications still on their way arrive before it decides one was
 * lost: a change committed a moment before is normally told within a millisecond on a LAN.
 */
const IN_FLIGHT_MS = 50;

/** A cache of records of some kinds, kept by the feed. */
export interface FedCache {
  /** Loads every record again (at start, and after a change was missed). */
  loadAll(): Promise<void>;
  /** Reads these records again; a record that is gone is forgotten. */
  reload(kind: ChangeKind, ids: string[]): Promise<void>;
}

type Change = { seq: number; kind: ChangeKind; ids: string[] };

/**
 * Keeps in-memory caches equal to the database across instances (docs/operations.md#scale-out: a change holds on
 * every instance within 1 s). Each change is committed together with a bump of the one-row
 * counter `changes.seq` and a pg_notify carrying the new number, the kind and the ids; every
 * instance LISTENs and reads those records again. The counter orders the changes (its row lock is
 * held until commit, so numbers follow commit order, which is also the order notifications are
 * delivered in) and shows a missed one: a gap in the numbers, a LISTEN connection that was lost
 * and came back, or refresh() finding the counter ahead. Each of those loads everything again.
 * All of it runs one step at a time, so an older read never overwrites a newer one.
 */
export class ChangeFeed {
  private seen = -1;
  private chain: Promise<unknown> = Promise.resolve();
  private pending: Change[] = [];
  private readonly caches: { cache: FedCache; kinds: Set<ChangeKind> }[] = [];
  private subscription: { unlisten(): Promise<void> } | null = null;
  private listening = false;
  private scheduled = false;
  private closed = false;

  /** `listener`: the client whose one dedicated connection LISTENs (a direct one, behind PgBouncer). */
  constructor(
    private readonly db: PgDb,
    private readonly listener: Pick<SQL, "listen">,
    private readonly onError: (error: unknown) => void,
  ) {}

  private get client(): SQL {
    return this.db.$client;
  }

  register(cache: FedCache, kinds: ChangeKind[]): void {
    this.caches.push({ cache, kinds: new Set(kinds) });
  }

  /** Listens, then loads every cache; notifications that arrive meanwhile are applied after. */
  async start(): Promise<void> {
    this.subscription = await this.listener.listen(
      CHANNEL,
      (payload) => this.notified(payload),
      () => {
        // After a reconnect: what changed while it was down was not told.
        if (this.listening) void this.serially(() => this.catchUp()).catch(this.onError);
        this.listening = true;
      },
    );
    await this.serially(() => this.loadAll());
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.subscription?.unlisten().catch(() => {});
    await this.chain.catch(() => {});
  }

  /** Runs `work` after everything the feed does before it, and before anything after. */
  serially<T>(work: () => Promise<T> | T): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => {});
    return next;
  }

  /**
   * Records a change in the transaction that makes it: committed with it, told to every instance
   * when it commits, never when it rolls back.
   */
  async record(tx: Tx, kind: ChangeKind, ids: string[]): Promise<void> {
    await tx.raw.unsafe(
      `WITH s AS (UPDATE changes SET seq = seq + 1 WHERE id = 1 RETURNING seq)
      SELECT pg_notify('${CHANNEL}', json_build_object('seq', s.seq, 'kind', $1::text, 'ids', $2::text[])::text) FROM s`,
      [kind, ids],
    );
  }

  /**
   * The backstop, called about once a second: true when it found a change that was never told
   * (the counter is ahead of what this instance applied) and loaded everything again.
   */
  async refresh(): Promise<boolean> {
    if (this.closed) return false;
    let current = await this.currentSeq();
    if (current <= this.seen) return false;
    await Bun.sleep(IN_FLIGHT_MS);
    await this.serially(() => this.applyPending());
    if (current <= this.seen) return false;
    return this.serially(async () => {
      current = await this.currentSeq();
      if (current <= this.seen) return false;
      await this.loadAll();
      return true;
    });
  }

  private async currentSeq(): Promise<number> {
    const [row] = await this.client.unsafe("SELECT seq FROM changes WHERE id = 1");
    return Number(row.seq);
  }

  private notified(payload: string): void {
    if (this.closed) return;
    this.pending.push(JSON.parse(payload) as Change);
    this.schedule();
  }

  /** Notifications that arrive together are applied together: one read per kind. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.serially(() => {
      this.scheduled = false;
      return this.applyPending();
    }).catch(this.onError);
  }

  private async applyPending(): Promise<void> {
    const batch = this.pending
      .splice(0)
      .filter((c) => c.seq > this.seen)
      .sort((a, b) => a.seq - b.seq);
    const last = batch.at(-1);
    if (last === undefined) return;
    if (batch.some((c, i) => c.seq !== this.seen + 1 + i)) return this.loadAll();
    const byKind = new Map<ChangeKind, Set<string>>();
    for (const change of batch) {
      const ids = byKind.get(change.kind) ?? new Set<string>();
      for (const id of change.ids) ids.add(id);
      byKind.set(change.kind, ids);
    }
    for (const [kind, ids] of byKind) {
      await Promise.all(this.caches.filter((c) => c.kinds.has(kind)).map((c) => c.cache.reload(kind, [...ids])));
    }
    this.seen = last.seq;
  }

  private async catchUp(): Promise<void> {
    if ((await this.currentSeq()) > this.seen) await this.loadAll();
  }

  /** The counter first: whatever changes after it is told, and read again, after this load. */
  private async loadAll(): Promise<void> {
    const seq = await this.currentSeq();
    this.pending = this.pending.filter((c) => c.seq > seq);
    await Promise.all(this.caches.map((c) => c.cache.loadAll()));
    this.seen = seq;
    if (this.pending.length > 0) this.schedule();
  }
}
