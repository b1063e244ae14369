import { setImmediate as nextTurn } from "node:timers/promises";
import type { SpanContext } from "@opentelemetry/api";
import type { Deps } from "../deps.ts";
import type { Worker } from "../runtime/worker.ts";
import { idSource } from "../runtime/random.ts";
import type { ClaimedDelivery, NewDelivery, NewEvent } from "../store/queue.ts";
import type { AttemptDeps } from "./attempt.ts";
import { AttemptSlots } from "./attempt-slots.ts";
import { CLAIM_BATCH, claimAtCapacity, leasedPerEndpoint, leaseMs } from "./claim-pacing.ts";
import {
  type BufferedDelivery,
  EndpointBuffers,
  leasedOnEnqueue,
  MAX_BUFFERED,
  MAX_BUFFERED_BYTES,
} from "./endpoint-buffers.ts";
import { MAX_EVENT_BYTES } from "./ingress.ts";

/** How often, by the injected clock, the pending deliveries are counted for the metrics. */
const COUNT_PENDING_EVERY_MS = 60_000;

export type DispatcherDeps = AttemptDeps & Pick<Deps, "random">;

/**
 * Runs the durable queue: starts deliveries from their endpoint's buffer (see EndpointBuffers), fresh
 * ones and due ones leased from the store in batches, within the in-flight bounds (see AttemptSlots).
 * It is woken at once when deliveries are queued, and the clock's tick each second (see
 * Clock.everySecond) picks up due retries and expired leases.
 * (Deliveries past their retention are purged by src/retention/.)
 */
export class Dispatcher implements Worker {
  /** Enqueue's commits, and the turns after them that mark their deliveries ready (see enqueue). */
  private starting = new Set<Promise<void>>();
  private buffers = new EndpointBuffers();
  private slots: AttemptSlots;
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
    this.slots = new AttemptSlots(deps, this.buffers, {
      stopped: () => this.stopped,
      attemptEnded: (endpointId) => this.attemptEnded(endpointId),
    });
  }

  private get leaseMs(): number {
    return leaseMs(this.deps.config.webhookTimeoutMs);
  }

  /** See leasedPerEndpoint. */
  private get leasedPerEndpoint(): number {
    return leasedPerEndpoint(this.deps.store.queue.soleWorker, this.deps.config.webhookTimeoutMs);
  }

  /** How many more deliveries the endpoint may have leased to this process: its spare capacity. */
  private capacityOf(endpointId: string): number {
    return this.leasedPerEndpoint - this.slots.of(endpointId) - this.buffers.lengthOf(endpointId);
  }

  /** Whether one of these endpoints has the capacity to make a claim worth its cost (see claimAtCapacity). */
  private claimWorthIt(endpointIds: Iterable<string>): boolean {
    const atCapacity = claimAtCapacity(this.deps.store.queue.soleWorker, this.leasedPerEndpoint);
    for (const id of endpointIds) if (this.capacityOf(id) >= atCapacity) return true;
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
        const limit = Math.min(CLAIM_BATCH, MAX_BUFFERED - this.buffers.count);
        if (limit <= 0 || this.buffers.bytes >= MAX_BUFFERED_BYTES) return;
        const endedBefore = this.slots.attemptsEnded;
        const batch = await this.deps.store.queue.claimDue(this.deps.clock.now(), {
          leaseId: this.newLeaseId(),
          limit,
          perEndpoint: this.leasedPerEndpoint,
          leaseMs: this.leaseMs,
          maxBytes: MAX_BUFFERED_BYTES - this.buffers.bytes,
        });
        this.bufferClaimed(batch);
        if (batch.length < limit) {
          this.settleBacklog(endedBefore);
          return;
        }
      }
    } catch (error) {
      this.deps.logger.error("delivery queue claim failed", { error });
    }
  }

  /** Puts a claim's deliveries in their endpoints' buffers and starts what their slots allow. */
  private bufferClaimed(batch: ClaimedDelivery[]): void {
    const endpoints = new Set<string>();
    for (const { endpoint, ...claimed } of batch) {
      this.buffers.add(endpoint.id, { claimed, ready: true });
      endpoints.add(endpoint.id);
    }
    // An endpoint a claim took from may have more due; it is claimed again as capacity frees.
    for (const id of endpoints) {
      this.backlog.add(id);
      this.slots.startBuffered(id);
    }
  }

  /**
   * After a claim that stopped short of its limit: unless the buffers' byte bound stopped it (no
   * event is larger than MAX_EVENT_BYTES), or slots were released while it ran (a shared queue's
   * claim may have counted their leases as still live), it stopped short of an endpoint's capacity
   * only because nothing more of it was due, so such endpoints leave the backlog.
   */
  private settleBacklog(endedBefore: number): void {
    if (MAX_BUFFERED_BYTES - this.buffers.bytes >= MAX_EVENT_BYTES && this.slots.attemptsEnded === endedBefore) {
      for (const id of this.backlog) if (this.capacityOf(id) > 0) this.backlog.delete(id);
    }
  }

  /** After an attempt's end has started what its slot allows. */
  private attemptEnded(endpointId: string): void {
    // On a shared queue the lease this attempt held may be what kept another instance's
    // deliveries to the endpoint waiting (the cap of 10 counts every instance's leases, and
    // that instance's claim found no capacity): whoever releases a lease claims after it, or
    // they would wait for the next tick.
    if (!this.deps.store.queue.soleWorker) this.backlog.add(endpointId);
    // A released slot matters only if stored work may be waiting and there is capacity enough
    // for a claim; otherwise the claim query is skipped (fresh deliveries start without one,
    // and the tick picks up retries).
    if (this.claimWorthIt(this.backlog)) this.wakeSoon();
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
        this.buffers.count < MAX_BUFFERED &&
        this.buffers.bytes + event.body.length <= MAX_BUFFERED_BYTES;
      if (!take) {
        this.backlog.add(d.endpointId);
        toStore.add(d.endpointId);
        return d;
      }
      const item = leasedOnEnqueue(d, event, lease, origin);
      this.buffers.add(d.endpointId, item);
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
      this.buffers.remove(buffered);
      throw error;
    }
    if (this.claimWorthIt(toStore)) this.wake();
    if (buffered.length === 0) return;
    // In a later turn of the event loop, so that the caller's answer (ingress's 200) goes out
    // before the deliveries are signed and their requests opened.
    const starting: Promise<void> = nextTurn()
      .then(() => {
        for (const item of buffered) item.ready = true;
        for (const id of new Set(buffered.map((item) => item.claimed.delivery.endpointId)))
          this.slots.startBuffered(id);
      })
      .finally(() => this.starting.delete(starting));
    this.starting.add(starting);
  }

  /** What the clock's tick does each second: the pending count once a minute (by the injected clock), then a wake. */
  private async onTick(): Promise<void> {
    const now = this.deps.clock.now();
    // The claim skips endpoints without capacity; their due retries are claimed once capacity frees.
    for (const id of new Set([...this.slots.endpointIds(), ...this.buffers.endpointIds()]))
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
      this.slots.inFlight.size > 0 ||
      this.starting.size > 0 ||
      this.buffers.count > 0 ||
      this.wakeScheduled
    ) {
      // Everything the loop waits on is in these (enqueue's commits included): awaiting settled
      // promises alone would never let the event loop turn, and the work never end.
      await Promise.all([this.claiming, ...this.starting, ...this.slots.inFlight]);
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
    await Promise.all([...this.slots.inFlight]);
  }
}
