import { setImmediate as nextTurn } from "node:timers/promises";
import type { SpanContext } from "@opentelemetry/api";
import type { Deps } from "../deps.ts";
import type { Worker } from "../runtime/worker.ts";
import { idSource } from "../runtime/random.ts";
import type { ClaimedDelivery, NewDelivery, NewEvent } from "../store/queue.ts";
import { runAttempt, type AttemptDeps } from "./attempt.ts";
import { MAX_EVENT_BYTES } from "./ingress.ts";

/** docs/webhooks.md#at-least-once-and-in-no-fixed-order: up to 10 requests in flight to one endpoint. */
export const PER_ENDPOINT_IN_FLIGHT = 10;
/** Bounds sockets and memory whatever the number of endpoints. */
export const GLOBAL_IN_FLIGHT = 256;
/** Bound the deliveries, and the body bytes, held in endpoints' buffers (see Dispatcher.buffers). */
const MAX_BUFFERED = 4 * GLOBAL_IN_FLIGHT;
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/**
 * At most this many deliveries per claim, so that one claim's transaction stays short (its bodies
 * are bounded by MAX_BUFFERED_BYTES).
 */
const CLAIM_BATCH = 64;
/** A lease outlasts an attempt's time-out by this much (see leaseMs). */
const LEASE_MARGIN_MS = 60_000;
/** How long a buffered delivery may wait for a slot: the lease margin, less some slack. */
const BUFFER_WAIT_MS = 50_000;
/** How often, by the injected clock, the pending deliveries are counted for the metrics. */
const COUNT_PENDING_EVERY_MS = 60_000;

/**
 * A delivery leased to this process (stored so by enqueue, or claimed from the store), waiting in
 * its endpoint's buffer for a slot. Its endpoint is read when it starts (see claimedFromBuffer).
 */
interface BufferedDelivery {
  claimed: Omit<ClaimedDelivery, "endpoint">;
  /** Set on the turn after enqueue's commit (see enqueue): only then may it start. */
  ready: boolean;
  /** The trace its event arrived in (see enqueue). */
  origin?: SpanContext;
}

const bytesOf = (item: BufferedDelivery) => item.claimed.body?.length ?? 0;

export type DispatcherDeps = AttemptDeps & Pick<Deps, "random">;

/**
 * Runs the durable queue: starts deliveries from their endpoint's buffer, fresh ones and due ones
 * leased from the store in batches, never more than GLOBAL_IN_FLIGHT attempts at once nor
 * PER_ENDPOINT_IN_FLIGHT to one endpoint. It is woken at once when deliveries are queued, and the
 * clock's tick each second (see Clock.everySecond) picks up due retries and expired leases.
 * (Deliveries past their retention are purged by src/retention/.)
 */
export class Dispatcher implements Worker {
  private inFlight = new Set<Promise<void>>();
  /** Enqueue's commits, and the turns after them that mark their deliveries ready (see enqueue). */
  private starting = new Set<Promise<void>>();
  /**
   * Per endpoint, deliveries leased to this process, oldest first, each waiting for one of the
   * endpoint's slots: fresh ones, which start without a claim, and those a claim took ahead of the
   * slots. A claim costs several times more than the attempt's own writes when it takes one
   * delivery at a time (bench/RESULTS.md): without the buffer, a hiccup of a few milliseconds sent
   * new deliveries to the store, each then needed a claim, and the queue stayed behind.
   */
  private buffers = new Map<string, BufferedDelivery[]>();
  private bufferedCount = 0;
  /** Body bytes of the buffered deliveries (an event's body counted once per delivery of it). */
  private bufferedBytes = 0;
  /** Per endpoint, the slots this process holds: attempts in flight or about to start (see acquire). */
  private endpointInFlight = new Map<string, number>();
  /** Attempts ended so far (see claim). */
  private attemptsEnded = 0;
  /** Endpoints that may have due deliveries waiting in the store: new ones must queue behind them. */
  private backlog = new Set<string>();
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  private ticker: { stop(): void } | null = null;
  private lastCount = -Infinity;
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
   * How many deliveries an endpoint may have leased to this process, in flight or buffered. A sole
   * worker: the slots, plus as many rounds of them as can wait within BUFFER_WAIT_MS, since each
   * round ends within the time-out, so no buffered delivery's lease runs out before its attempt ends.
   * On a shared queue the store counts every instance's leases against the 10 in flight of
   * docs/webhooks.md#at-least-once-and-in-no-fixed-order, so a lease is a slot and nothing is buffered beyond them.
   */
  private get leasedPerEndpoint(): number {
    if (!this.deps.store.queue.soleWorker) return PER_ENDPOINT_IN_FLIGHT;
    return PER_ENDPOINT_IN_FLIGHT * (1 + Math.floor(BUFFER_WAIT_MS / this.deps.config.webhookTimeoutMs));
  }

  /** How many more deliveries the endpoint may have leased to this process: its spare capacity. */
  private capacityOf(endpointId: string): number {
    return (
      this.leasedPerEndpoint -
      (this.endpointInFlight.get(endpointId) ?? 0) -
      (this.buffers.get(endpointId)?.length ?? 0)
    );
  }

  /**
   * The capacity an endpoint needs before its stored work is claimed after an attempt ends: a
   * round of slots, so that claims come in batches rather than one per released slot, while the
   * buffer still has a round left to start meanwhile; one, when the buffer holds no more than the
   * slots (long time-outs). On a shared queue, where nothing is buffered, half the slots: a claim
   * costs the database about as much as the attempts of the deliveries it takes record, so one per
   * released slot would double that, and the other half are still in flight meanwhile (new work,
   * and the tick each second, claim whatever the capacity).
   */
  private get claimAtCapacity(): number {
    if (!this.deps.store.queue.soleWorker) return PER_ENDPOINT_IN_FLIGHT / 2;
    return Math.max(1, Math.min(PER_ENDPOINT_IN_FLIGHT, this.leasedPerEndpoint - PER_ENDPOINT_IN_FLIGHT));
  }

  /** Whether one of these endpoints has the capacity to make a claim worth its cost. */
  private claimWorthIt(endpointIds: Iterable<string>): boolean {
    for (const id of endpointIds) if (this.capacityOf(id) >= this.claimAtCapacity) return true;
    return false;
  }

  /** Claims and starts due deliveries now (coalesced: many wakes make one claim loop). */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = null;
      if (this.claimAgain) {
        this.claimAgain = false;
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
   * Claims due deliveries into their endpoints' buffers, as many as each has capacity for, and
   * starts what the slots allow: the rest start from the buffer as slots are released, without a
   * claim each.
   */
  private async claim(): Promise<void> {
    await this.recovered;
    try {
      while (!this.stopped) {
        const limit = Math.min(CLAIM_BATCH, MAX_BUFFERED - this.bufferedCount);
        if (limit <= 0 || this.bufferedBytes >= MAX_BUFFERED_BYTES) return;
        const endedBefore = this.attemptsEnded;
        const batch = await this.deps.store.queue.claimDue(this.deps.clock.now(), {
          leaseId: this.newLeaseId(),
          limit,
          perEndpoint: this.leasedPerEndpoint,
          leaseMs: this.leaseMs,
          maxBytes: MAX_BUFFERED_BYTES - this.bufferedBytes,
        });
        const endpoints = new Set<string>();
        for (const { endpoint, ...claimed } of batch) {
          this.addToBuffer(endpoint.id, { claimed, ready: true });
          endpoints.add(endpoint.id);
        }
        // An endpoint a claim took from may have more due; it is claimed again as capacity frees.
        for (const id of endpoints) {
          this.backlog.add(id);
          this.startBuffered(id);
        }
        if (batch.length < limit) {
          // Unless the buffers' byte bound stopped it (no event is larger than MAX_EVENT_BYTES), or
          // slots were released while it ran (a shared queue's claim may have counted their leases
          // as still live), the claim stopped short of an endpoint's capacity only because nothing
          // more of it was due.
          if (MAX_BUFFERED_BYTES - this.bufferedBytes >= MAX_EVENT_BYTES && this.attemptsEnded === endedBefore) {
            for (const id of this.backlog) if (this.capacityOf(id) > 0) this.backlog.delete(id);
          }
          return;
        }
      }
    } catch (error) {
      this.deps.logger.error("delivery queue claim failed", { error });
    }
  }

  /** Takes one of the endpoint's in-flight slots. */
  private acquire(endpointId: string): void {
    this.endpointInFlight.set(endpointId, (this.endpointInFlight.get(endpointId) ?? 0) + 1);
  }

  private release(endpointId: string): void {
    const n = (this.endpointInFlight.get(endpointId) ?? 1) - 1;
    if (n > 0) this.endpointInFlight.set(endpointId, n);
    else this.endpointInFlight.delete(endpointId);
  }

  /**
   * Runs one attempt in a slot of `endpointId` already acquired; `prepare` gives null when there is
   * nothing left to attempt.
   */
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
        const globalSlotReleased = this.inFlight.size >= GLOBAL_IN_FLIGHT;
        this.attemptsEnded++;
        this.inFlight.delete(attempt);
        this.release(endpointId);
        this.startBuffered(endpointId);
        // Other endpoints' buffers wait on the global bound only while it is reached.
        if (globalSlotReleased) for (const id of this.buffers.keys()) this.startBuffered(id);
        // On a shared queue the lease this attempt held may be what kept another instance's
        // deliveries to the endpoint waiting (the cap of 10 counts every instance's leases, and
        // that instance's claim found no capacity): whoever releases a lease claims after it, or
        // they would wait for the next tick.
        if (!this.deps.store.queue.soleWorker) this.backlog.add(endpointId);
        // A released slot matters only if stored work may be waiting and there is capacity enough
        // for a claim; otherwise the claim query is skipped (fresh deliveries start without one,
        // and the tick picks up retries).
        if (this.claimWorthIt(this.backlog)) this.wakeSoon();
      });
    this.inFlight.add(attempt);
  }

  /** Starts the endpoint's buffered deliveries while it has free slots. */
  private startBuffered(endpointId: string): void {
    const buffer = this.buffers.get(endpointId);
    if (!buffer) return;
    let item = buffer[0];
    while (
      item?.ready &&
      !this.stopped &&
      (this.endpointInFlight.get(endpointId) ?? 0) < PER_ENDPOINT_IN_FLIGHT &&
      this.inFlight.size < GLOBAL_IN_FLIGHT
    ) {
      const started = item;
      buffer.shift();
      this.bufferedCount--;
      this.bufferedBytes -= bytesOf(started);
      this.acquire(endpointId);
      this.launch(endpointId, started.claimed.delivery.id, () => this.claimedFromBuffer(started), started.origin);
      item = buffer[0];
    }
    if (buffer.length === 0) this.buffers.delete(endpointId);
  }

  /**
   * A buffered delivery as an attempt takes it. The endpoint is read when the attempt starts, so a
   * buffer never sends with a stale URL or secret; null when it was deleted meanwhile (its
   * deliveries went with it).
   */
  private async claimedFromBuffer({ claimed }: BufferedDelivery): Promise<ClaimedDelivery | null> {
    const endpoint = await this.deps.store.endpoints.forDelivery(claimed.delivery.endpointId);
    return endpoint ? { ...claimed, endpoint } : null;
  }

  /** Puts a leased delivery at the end of its endpoint's buffer. */
  private addToBuffer(endpointId: string, item: BufferedDelivery): void {
    const buffer = this.buffers.get(endpointId);
    if (buffer) buffer.push(item);
    else this.buffers.set(endpointId, [item]);
    this.bufferedCount++;
    this.bufferedBytes += bytesOf(item);
  }

  /**
   * Stores new events and deliveries (one transaction, durable when this resolves, as
   * DeliveryQueue.enqueue). On a sole worker, those whose event comes with them, due now, whose
   * endpoint has no older due work in the store and capacity in its buffer are stored already leased to
   * this process (so a crash still leaves them to be attempted after restart) and start from the
   * buffer, without a claim, from the next turn on. The rest wait in the store for the next claim (on
   * a shared queue, all of them: whichever instance claims first sends them). `origin`, the
   * trace the events arrived in, is the parent of the first attempts that start from the buffer.
   */
  async enqueue(events: NewEvent[], deliveries: NewDelivery[], origin?: SpanContext): Promise<void> {
    await this.recovered;
    const now = this.deps.clock.now();
    const bufferable = !this.stopped && this.deps.store.queue.soleWorker;
    const lease = { id: this.newLeaseId(), until: now + this.leaseMs };
    // A replay's event is already stored and does not come with it: it is left to the claim.
    const eventsById = new Map(events.map((e) => [e.id, e]));
    const buffered: BufferedDelivery[] = [];
    const toStore = new Set<string>();
    const stored = deliveries.map((d) => {
      const event = eventsById.get(d.eventId);
      const take =
        bufferable &&
        event !== undefined &&
        d.nextAttemptAt <= now &&
        !this.backlog.has(d.endpointId) &&
        this.capacityOf(d.endpointId) > 0 &&
        this.bufferedCount < MAX_BUFFERED &&
        this.bufferedBytes + event.body.length <= MAX_BUFFERED_BYTES;
      if (!take) {
        this.backlog.add(d.endpointId);
        toStore.add(d.endpointId);
        return d;
      }
      const item: BufferedDelivery = {
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
      this.addToBuffer(d.endpointId, item);
      buffered.push(item);
      return { ...d, lease };
    });
    const storing = this.deps.store.queue.enqueue(events, stored);
    // drain() waits for the commit too (it may wait for the disk): until then the buffered deliveries
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
      this.unbuffer(buffered);
      throw error;
    }
    if (this.claimWorthIt(toStore)) this.wake();
    if (buffered.length === 0) return;
    // In a later turn of the event loop, so that the caller's answer (ingress's 200) goes out
    // before the deliveries are signed and their requests opened.
    const starting: Promise<void> = nextTurn()
      .then(() => {
        for (const item of buffered) item.ready = true;
        for (const id of new Set(buffered.map((item) => item.claimed.delivery.endpointId))) this.startBuffered(id);
      })
      .finally(() => this.starting.delete(starting));
    this.starting.add(starting);
  }

  /** Takes back deliveries whose commit failed. */
  private unbuffer(items: BufferedDelivery[]): void {
    const gone = new Set(items);
    for (const [id, buffer] of this.buffers) {
      const kept = buffer.filter((item) => !gone.has(item));
      this.bufferedCount -= buffer.length - kept.length;
      for (const item of buffer) if (gone.has(item)) this.bufferedBytes -= bytesOf(item);
      if (kept.length > 0) this.buffers.set(id, kept);
      else this.buffers.delete(id);
    }
  }

  /** What the clock's tick does each second: the pending count once a minute (by the injected clock), then a wake. */
  private async onTick(): Promise<void> {
    const now = this.deps.clock.now();
    // The claim skips endpoints without capacity; their due retries are claimed once capacity frees.
    for (const id of new Set([...this.endpointInFlight.keys(), ...this.buffers.keys()]))
      if (this.capacityOf(id) <= 0) this.backlog.add(id);
    if (now - this.lastCount >= COUNT_PENDING_EVERY_MS) {
      this.lastCount = now;
      await this.countPending();
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
      this.claiming ||
      this.inFlight.size > 0 ||
      this.starting.size > 0 ||
      this.bufferedCount > 0 ||
      this.wakeScheduled
    ) {
      // Everything the loop waits on is in these (enqueue's commits included): awaiting settled
      // promises alone would never let the event loop turn, and the work never end.
      await Promise.all([this.claiming, ...this.starting, ...this.inFlight]);
      if (this.wakeScheduled) await nextTurn();
    }
  }

  private async countPending(): Promise<void> {
    try {
      this.deps.metrics.deliveriesPending.set(await this.deps.store.queue.pendingCount());
    } catch (error) {
      this.deps.logger.error("counting pending deliveries failed", { error });
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
    await this.claiming;
    await Promise.all([...this.starting]);
    await Promise.all([...this.inFlight]);
  }
}
