import { setImmediate as nextTurn } from "node:timers/promises";
import type { SpanContext } from "@opentelemetry/api";
import type { Deps, Worker } from "../runtime/deps.ts";
import { idSource } from "../runtime/random.ts";
import type { Retention } from "../store/types.ts";
import type { ClaimedDelivery, NewDelivery, NewEvent } from "../store/queue.ts";
import { runAttempt, type AttemptDeps } from "./attempt.ts";
import { MAX_EVENT_BYTES } from "./ingress.ts";

/** SPEC 6.5: up to 10 requests in flight to one endpoint. */
export const PER_ENDPOINT_IN_FLIGHT = 10;
/** Bounds sockets and memory whatever the number of endpoints. */
export const GLOBAL_IN_FLIGHT = 256;
/** Bound the deliveries, and the body bytes, held by endpoints' lines (see Dispatcher.lines). */
const LINED_TOTAL = 4 * GLOBAL_IN_FLIGHT;
const LINED_BYTES = 64 * 1024 * 1024;
/** At most this many deliveries per claim, so that one claim's transaction stays short (its bodies are bounded by LINED_BYTES). */
const CLAIM_BATCH = 64;
/** A lease outlasts an attempt's time-out by this much (see leaseMs). */
const LEASE_MARGIN_MS = 60_000;
/** How long a lined delivery may wait for a slot: the lease margin, less some slack. */
const LINE_WAIT_MS = 50_000;
export const RETENTION_MS: Record<Retention, number> = { "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 };
/** Hourly usage counts outlive the log they come from: long enough to bill a month and compare it with the last. */
export const USAGE_KEPT_MS = 62 * 24 * 3_600_000;
const PURGE_EVERY_MS = 60_000;

/**
 * A delivery leased to this process (stored so by enqueue, or claimed from the store), waiting in
 * its endpoint's line for a slot. Its endpoint is read when it starts (see claimedFromLine).
 */
interface LinedDelivery {
  claimed: Omit<ClaimedDelivery, "endpoint">;
  /** Set on the turn after enqueue's commit (see enqueue): only then may it start. */
  ready: boolean;
  /** The trace its event arrived in (see enqueue). */
  origin?: SpanContext;
}

const bytesOf = (item: LinedDelivery) => item.claimed.body?.length ?? 0;

export type DispatcherDeps = AttemptDeps & Pick<Deps, "random">;

/**
 * Runs the durable queue: starts deliveries from their endpoint's line, fresh ones and due ones
 * leased from the store in batches, never more than GLOBAL_IN_FLIGHT attempts at once nor
 * PER_ENDPOINT_IN_FLIGHT to one endpoint. It is woken at once when deliveries are queued, and the
 * clock's tick each second (croner, see Clock.everySecond) picks up due retries and expired leases
 * and purges deliveries past their retention.
 */
export class Dispatcher implements Worker {
  private inFlight = new Set<Promise<void>>();
  /** Enqueue's commits, and the turns after them that mark their deliveries ready (see enqueue). */
  private starting = new Set<Promise<void>>();
  /**
   * Per endpoint, deliveries leased to this process, oldest first, each waiting for one of the
   * endpoint's slots: fresh ones, which start without a claim, and those a claim took ahead of the
   * slots. A claim costs several times more than the attempt's own writes when it takes one
   * delivery at a time (bench/RESULTS.md): without the line, a hiccup of a few milliseconds sent
   * new deliveries to the store, each then needed a claim, and the queue stayed behind.
   */
  private lines = new Map<string, LinedDelivery[]>();
  private linedTotal = 0;
  /** Body bytes of the lined deliveries (an event's body counted once per delivery of it). */
  private linedBytes = 0;
  /** Leases this process holds per endpoint (attempts running or about to start). */
  private leased = new Map<string, number>();
  /** Attempts ended so far (see pump). */
  private freed = 0;
  /** Endpoints that may have due deliveries waiting in the store: new ones must queue behind them. */
  private backlog = new Set<string>();
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private ticker: { stop(): void } | null = null;
  private lastPurge = -Infinity;
  private stopped = false;
  private wakeScheduled = false;
  private stopListening: (() => void) | null = null;
  /**
   * Settles once the leases of this instance's earlier run are taken back (see start): no lease is
   * made before, or it could be taken back with them.
   */
  private recovered: Promise<void> = Promise.resolve();
  private readonly newLeaseId: () => string;

  constructor(private readonly deps: DispatcherDeps) {
    this.newLeaseId = idSource(deps.random, "lease", 16);
  }

  private get leaseMs(): number {
    // Longer than any attempt can take, so a live attempt never loses its lease.
    return this.deps.config.webhookTimeoutMs + LEASE_MARGIN_MS;
  }

  /**
   * How many deliveries an endpoint may have leased to this process, in flight or lined. A sole
   * worker: the slots, plus as many rounds of them as can wait within LINE_WAIT_MS, since each
   * round ends within the time-out, so no lined delivery's lease runs out before its attempt ends.
   * On a shared queue the store counts every instance's leases against SPEC 6.5's 10 in flight, so
   * a lease is a slot and nothing is lined beyond them.
   */
  private get leasedPerEndpoint(): number {
    if (!this.deps.store.queue.soleWorker) return PER_ENDPOINT_IN_FLIGHT;
    return PER_ENDPOINT_IN_FLIGHT * (1 + Math.floor(LINE_WAIT_MS / this.deps.config.webhookTimeoutMs));
  }

  /** How many more deliveries the endpoint may have leased to this process. */
  private roomOf(endpointId: string): number {
    return this.leasedPerEndpoint - (this.leased.get(endpointId) ?? 0) - (this.lines.get(endpointId)?.length ?? 0);
  }

  /**
   * The room an endpoint needs before its stored work is claimed after an attempt ends: a round of
   * slots, so that claims come in batches rather than one per freed slot, while the line still has
   * a round left to start meanwhile; one, when the line holds no more than the slots (long
   * time-outs). On a shared queue, where nothing is lined, half the slots: a claim costs the
   * database about as much as the attempts of the deliveries it takes record, so one per freed slot
   * would double that, and the other half are still in flight meanwhile (new work, and the tick each
   * second, claim whatever the room).
   */
  private get claimAtRoom(): number {
    if (!this.deps.store.queue.soleWorker) return PER_ENDPOINT_IN_FLIGHT / 2;
    return Math.max(1, Math.min(PER_ENDPOINT_IN_FLIGHT, this.leasedPerEndpoint - PER_ENDPOINT_IN_FLIGHT));
  }

  /** Whether one of these endpoints has the room to make a claim worth its cost. */
  private claimWorthIt(endpointIds: Iterable<string>): boolean {
    for (const id of endpointIds) if (this.roomOf(id) >= this.claimAtRoom) return true;
    return false;
  }

  /** Claims and starts due deliveries now (coalesced: many wakes make one claim loop). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.pumpAgain) {
        this.pumpAgain = false;
        this.wake();
      }
    });
  }

  /** Completions that land in the same turn of the event loop share one claim. */
  private wakeSoon(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.wake();
    });
  }

  /**
   * Claims due deliveries into their endpoints' lines, as many as each line has room for, and
   * starts what the slots allow: the rest start from the line as slots free, without a claim each.
   */
  private async pump(): Promise<void> {
    await this.recovered;
    try {
      while (!this.stopped) {
        const limit = Math.min(CLAIM_BATCH, LINED_TOTAL - this.linedTotal);
        if (limit <= 0 || this.linedBytes >= LINED_BYTES) return;
        const freedBefore = this.freed;
        const batch = await this.deps.store.queue.claimDue(this.deps.clock.now(), {
          leaseId: this.newLeaseId(),
          limit,
          perEndpoint: this.leasedPerEndpoint,
          leaseMs: this.leaseMs,
          maxBytes: LINED_BYTES - this.linedBytes,
        });
        const endpoints = new Set<string>();
        for (const { endpoint, ...claimed } of batch) {
          this.line(endpoint.id, { claimed, ready: true });
          endpoints.add(endpoint.id);
        }
        // An endpoint a claim took from may have more due; it is claimed again as room frees.
        for (const id of endpoints) {
          this.backlog.add(id);
          this.fill(id);
        }
        if (batch.length < limit) {
          // Unless the lines' byte bound stopped it (no event is larger than MAX_EVENT_BYTES), or
          // slots freed while it ran (a shared queue's claim may have counted their leases as still
          // live), the claim stopped short of an endpoint's room only because nothing more of it
          // was due.
          if (LINED_BYTES - this.linedBytes >= MAX_EVENT_BYTES && this.freed === freedBefore) {
            for (const id of this.backlog) if (this.roomOf(id) > 0) this.backlog.delete(id);
          }
          return;
        }
      }
    } catch (error) {
      this.deps.logger.error("delivery queue claim failed", { error });
    }
  }

  private hold(endpointId: string): void {
    this.leased.set(endpointId, (this.leased.get(endpointId) ?? 0) + 1);
  }

  private unhold(endpointId: string): void {
    const n = (this.leased.get(endpointId) ?? 1) - 1;
    if (n > 0) this.leased.set(endpointId, n);
    else this.leased.delete(endpointId);
  }

  /** Runs one attempt in a slot of `endpointId` already held; `prepare` gives null when there is nothing left to attempt. */
  private launch(
    endpointId: string,
    deliveryId: string,
    prepare: () => Promise<ClaimedDelivery | null>,
    origin?: SpanContext,
  ): void {
    const attempt: Promise<void> = prepare()
      .then((claimed) => (claimed ? runAttempt(this.deps, claimed, origin) : undefined))
      .catch((error) => this.deps.logger.error("delivery attempt crashed", { delivery_id: deliveryId, error }))
      .finally(() => {
        const globalSlotFreed = this.inFlight.size >= GLOBAL_IN_FLIGHT;
        this.freed++;
        this.inFlight.delete(attempt);
        this.unhold(endpointId);
        this.fill(endpointId);
        // Other endpoints' lines wait on the global bound only while it is reached.
        if (globalSlotFreed) for (const id of this.lines.keys()) this.fill(id);
        // On a shared queue the lease this attempt held may be what kept another instance's
        // deliveries to the endpoint waiting (the cap of 10 counts every instance's leases, and
        // that instance's claim found no room): whoever frees a lease claims after it, or they
        // would wait for the next tick.
        if (!this.deps.store.queue.soleWorker) this.backlog.add(endpointId);
        // A freed slot matters only if stored work may be waiting and there is room enough for a
        // claim; otherwise the claim query is skipped (fresh deliveries start without one, and the
        // tick picks up retries).
        if (this.claimWorthIt(this.backlog)) this.wakeSoon();
      });
    this.inFlight.add(attempt);
  }

  /** Starts the endpoint's lined deliveries while it has free slots. */
  private fill(endpointId: string): void {
    const line = this.lines.get(endpointId);
    if (!line) return;
    while (
      line.length > 0 &&
      line[0]!.ready &&
      !this.stopped &&
      (this.leased.get(endpointId) ?? 0) < PER_ENDPOINT_IN_FLIGHT &&
      this.inFlight.size < GLOBAL_IN_FLIGHT
    ) {
      const item = line.shift()!;
      this.linedTotal--;
      this.linedBytes -= bytesOf(item);
      this.hold(endpointId);
      this.launch(endpointId, item.claimed.delivery.id, () => this.claimedFromLine(item), item.origin);
    }
    if (line.length === 0) this.lines.delete(endpointId);
  }

  /**
   * A lined delivery as an attempt takes it. The endpoint is read when the attempt starts, so a
   * line never sends with a stale URL or secret; null when it was deleted meanwhile (its
   * deliveries went with it).
   */
  private async claimedFromLine({ claimed }: LinedDelivery): Promise<ClaimedDelivery | null> {
    const endpoint = await this.deps.store.endpoints.forDelivery(claimed.delivery.endpointId);
    return endpoint ? { ...claimed, endpoint } : null;
  }

  /** Puts a leased delivery at the end of its endpoint's line. */
  private line(endpointId: string, item: LinedDelivery): void {
    const line = this.lines.get(endpointId);
    if (line) line.push(item);
    else this.lines.set(endpointId, [item]);
    this.linedTotal++;
    this.linedBytes += bytesOf(item);
  }

  /**
   * Stores new events and deliveries (one transaction, durable when this resolves, as
   * DeliveryQueue.enqueue). On a sole worker, those whose event comes with them, due now, whose
   * endpoint has no older due work in the store and room in its line are stored already leased to
   * this process (so a crash still leaves them to be attempted after restart) and start from the
   * line, without a claim, from the next turn on. The rest wait in the store for the next claim (on
   * a shared queue, all of them: whichever instance claims first sends them). `origin`, the
   * trace the events arrived in, is the parent of the first attempts that start from the line.
   */
  async enqueue(events: NewEvent[], deliveries: NewDelivery[], origin?: SpanContext): Promise<void> {
    await this.recovered;
    const now = this.deps.clock.now();
    const lineable = !this.stopped && this.deps.store.queue.soleWorker;
    const lease = { id: this.newLeaseId(), until: now + this.leaseMs };
    // A replay's event is already stored and does not come with it: it is left to the claim.
    const eventsById = new Map(events.map((e) => [e.id, e]));
    const lined: LinedDelivery[] = [];
    const toStore = new Set<string>();
    const stored = deliveries.map((d) => {
      const event = eventsById.get(d.eventId);
      const take =
        lineable &&
        event !== undefined &&
        d.nextAttemptAt <= now &&
        !this.backlog.has(d.endpointId) &&
        this.roomOf(d.endpointId) > 0 &&
        this.linedTotal < LINED_TOTAL &&
        this.linedBytes + event.body.length <= LINED_BYTES;
      if (!take) {
        this.backlog.add(d.endpointId);
        toStore.add(d.endpointId);
        return d;
      }
      const item: LinedDelivery = {
        claimed: {
          leaseId: lease.id,
          delivery: {
            id: d.id,
            accountId: d.accountId,
            endpointId: d.endpointId,
            eventId: d.eventId,
            status: "pending",
            attemptCount: 0,
            nextAttemptAt: lease.until,
            replayOf: d.replayOf,
            parkedReason: null,
            payloadAvailable: true,
            fields: event.fields,
            isTest: event.isTest,
            createdAt: d.createdAt,
            updatedAt: d.createdAt,
          },
          body: event.body,
          upstreamSignature: event.upstreamSignature,
        },
        ready: false,
        origin,
      };
      this.line(d.endpointId, item);
      lined.push(item);
      return { ...d, lease };
    });
    const storing = this.deps.store.queue.enqueue(events, stored);
    // drain() waits for the commit too (it may wait for the disk): until then the lined deliveries
    // cannot start, and nothing else of the queue would be pending to wait for.
    const committing: Promise<void> = storing
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.starting.delete(committing));
    this.starting.add(committing);
    try {
      await storing;
    } catch (error) {
      this.unline(lined);
      throw error;
    }
    if (this.claimWorthIt(toStore)) this.wake();
    if (lined.length === 0) return;
    // In a later turn of the event loop, so that the caller's answer (ingress's 200) goes out
    // before the deliveries are signed and their requests opened.
    const starting: Promise<void> = nextTurn()
      .then(() => {
        for (const item of lined) item.ready = true;
        for (const id of new Set(lined.map((item) => item.claimed.delivery.endpointId))) this.fill(id);
      })
      .finally(() => this.starting.delete(starting));
    this.starting.add(starting);
  }

  /** Takes back deliveries whose commit failed. */
  private unline(items: LinedDelivery[]): void {
    const gone = new Set(items);
    for (const [id, line] of this.lines) {
      const kept = line.filter((item) => !gone.has(item));
      this.linedTotal -= line.length - kept.length;
      for (const item of line) if (gone.has(item)) this.linedBytes -= bytesOf(item);
      if (kept.length > 0) this.lines.set(id, kept);
      else this.lines.delete(id);
    }
  }

  /** What the clock's tick does each second: a purge once a minute (by the injected clock), then a wake. */
  private async onTick(): Promise<void> {
    const now = this.deps.clock.now();
    // The claim skips endpoints without room; their due retries are claimed once room frees.
    for (const id of new Set([...this.leased.keys(), ...this.lines.keys()]))
      if (this.roomOf(id) <= 0) this.backlog.add(id);
    if (now - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now;
      await this.purge();
    }
    this.wake();
  }

  /** One scheduler tick, as tests drive it: resolves once the queue is idle (nothing in flight, nothing due). */
  async tick(): Promise<void> {
    await this.onTick();
    await this.drain();
  }

  /** Waits until nothing is in flight and no claim is running; completions keep waking the queue meanwhile. */
  async drain(): Promise<void> {
    this.wake();
    while (
      this.pumping ||
      this.inFlight.size > 0 ||
      this.starting.size > 0 ||
      this.linedTotal > 0 ||
      this.wakeScheduled
    ) {
      // Everything the loop waits on is in these (enqueue's commits included): awaiting settled
      // promises alone would never let the event loop turn, and the work never end.
      await Promise.all([this.pumping, ...this.starting, ...this.inFlight]);
      if (this.wakeScheduled) await nextTurn();
    }
  }

  async purge(): Promise<void> {
    try {
      const now = this.deps.clock.now();
      const removed = await this.deps.store.retention.purgeWebhookHistory(now, RETENTION_MS);
      if (removed.deliveries + removed.events > 0) this.deps.logger.info("webhook retention purge", removed);
      // One retention pass for all an account keeps: its request log too (SPEC 2.8), and usage
      // counts past USAGE_KEPT_MS.
      const logged = await this.deps.store.requests.purge(now, RETENTION_MS, now - USAGE_KEPT_MS);
      if (logged.requests + logged.usage > 0) this.deps.logger.info("request log retention purge", logged);
      this.deps.metrics.deliveriesPending.set(await this.deps.store.queue.pendingCount());
    } catch (error) {
      this.deps.logger.error("webhook retention purge failed", { error });
    }
  }

  start(): void {
    this.stopped = false;
    this.stopListening = this.deps.store.queue.onNewWork(() => this.wake());
    this.recovered = this.deps.store.queue
      .recoverLeases(this.deps.clock.now())
      .catch((error) => this.deps.logger.error("taking back the earlier run's leases failed", { error }));
    void this.recovered.then(() => this.wake());
    this.ticker = this.deps.clock.everySecond(() => this.onTick());
  }

  /** Stops claiming; attempts already in flight finish and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopListening?.();
    this.stopListening = null;
    this.ticker?.stop();
    this.ticker = null;
    await this.pumping;
    await Promise.all([...this.starting]);
    await Promise.all([...this.inFlight]);
  }
}
