import { Cron } from "croner";
import type { Worker } from "../runtime/deps.ts";
import type { Retention } from "../store/types.ts";
import type { ClaimedDelivery, DeliveryEndpoint, NewDelivery, NewEvent } from "../store/webhooks.ts";
import { runAttempt, type AttemptDeps } from "./attempt.ts";

/** SPEC 6.5: up to 10 requests in flight to one endpoint. */
export const PER_ENDPOINT_IN_FLIGHT = 10;
/** Bounds sockets and memory whatever the number of endpoints. */
export const GLOBAL_IN_FLIGHT = 256;
export const RETENTION_MS: Record<Retention, number> = { "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 };
const PURGE_EVERY_MS = 60_000;

/**
 * Runs the durable queue: leases due deliveries from the store and attempts them, never more than
 * GLOBAL_IN_FLIGHT at once (the store keeps each endpoint under PER_ENDPOINT_IN_FLIGHT). It is
 * woken at once when deliveries are queued, and a croner tick each second picks up due retries
 * and expired leases and purges deliveries past their retention.
 */
export class Dispatcher implements Worker {
  private inFlight = new Set<Promise<void>>();
  /** Launches of deliveries enqueue stored, due in the next turn (see enqueue), and how many deliveries they hold. */
  private starting = new Set<Promise<void>>();
  private toStart = 0;
  /** Leases this process holds per endpoint (attempts running or about to start). */
  private leased = new Map<string, number>();
  /** Endpoints that may have due deliveries waiting in the store: new ones must queue behind them. */
  private backlog = new Set<string>();
  /** The last claim found work, so more may be due: completions claim again until one finds none. */
  private claimFoundWork = false;
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private cron: Cron | null = null;
  private lastPurge = -Infinity;
  private stopped = false;
  private wakeScheduled = false;

  constructor(private readonly deps: AttemptDeps) {}

  private get leaseMs(): number {
    // Longer than any attempt can take, so a live attempt never loses its lease.
    return this.deps.config.webhookTimeoutMs + 60_000;
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

  private async pump(): Promise<void> {
    try {
      while (!this.stopped) {
        const free = GLOBAL_IN_FLIGHT - this.inFlight.size - this.toStart;
        if (free <= 0) return;
        const room = new Map([...this.backlog].map((id) => [id, PER_ENDPOINT_IN_FLIGHT - (this.leased.get(id) ?? 0)]));
        const batch = await this.deps.store.webhooks.claimDue(this.deps.clock.now(), {
          limit: free,
          perEndpoint: PER_ENDPOINT_IN_FLIGHT,
          leaseMs: this.leaseMs,
        });
        this.claimFoundWork = batch.length > 0;
        for (const claimed of batch) {
          const id = claimed.endpoint.id;
          if (room.has(id)) room.set(id, room.get(id)! - 1);
          this.hold(id);
          this.launch(claimed);
        }
        if (batch.length < free) {
          // The claim stopped short of an endpoint's room only because nothing more of it was due.
          for (const [id, left] of room) if (left > 0) this.backlog.delete(id);
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

  private launch(claimed: ClaimedDelivery): void {
    const attempt = runAttempt(this.deps, claimed)
      .catch((error) => this.deps.logger.error("delivery attempt crashed", { delivery_id: claimed.delivery.id, error }))
      .finally(() => {
        this.inFlight.delete(attempt);
        this.unhold(claimed.endpoint.id);
        // A freed slot matters only if stored work may be waiting; otherwise the claim query is
        // skipped (fresh deliveries start without one, and the tick picks up retries).
        if (this.claimFoundWork || this.backlog.size > 0) this.wakeSoon();
      });
    this.inFlight.add(attempt);
  }

  /**
   * Stores new events and deliveries (one transaction, durable when this resolves, as
   * WebhookStore.enqueue) and starts on the next turn, without a claim, those whose endpoint has
   * room and no older due work: they are stored already leased to this process, so a crash still
   * leaves them to be attempted after restart. The rest wait in the store for the next claim.
   */
  async enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void> {
    const now = this.deps.clock.now();
    const started: NewDelivery[] = [];
    // Only a delivery whose event comes with it can start here (a replay's event is already
    // stored): the rest are left unleased for the claim that follows.
    const eventsById = new Map(events.map((e) => [e.id, e]));
    const stored = deliveries.map((d) => {
      const room = !this.stopped && eventsById.has(d.eventId) && d.nextAttemptAt <= now && !this.backlog.has(d.endpointId)
        && (this.leased.get(d.endpointId) ?? 0) < PER_ENDPOINT_IN_FLIGHT && this.inFlight.size + this.toStart + started.length < GLOBAL_IN_FLIGHT;
      if (!room) {
        this.backlog.add(d.endpointId);
        return d;
      }
      this.hold(d.endpointId);
      const leased = { ...d, leaseUntil: now + this.leaseMs };
      started.push(leased);
      return leased;
    });
    try {
      await this.deps.store.webhooks.enqueue(events, stored);
    } catch (error) {
      for (const d of started) this.unhold(d.endpointId);
      throw error;
    }
    if (started.length < deliveries.length) this.wake();
    if (started.length === 0) return;
    this.toStart += started.length;
    // In a later turn of the event loop, so that the caller's answer (ingress's 200) goes out
    // before the deliveries are signed and their requests opened.
    const starting: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.launchStored(started, eventsById))
      .finally(() => this.starting.delete(starting));
    this.starting.add(starting);
  }

  /** Launches deliveries enqueue stored leased to this process. */
  private async launchStored(started: NewDelivery[], eventsById: Map<string, NewEvent>): Promise<void> {
    let endpoints: Map<string, DeliveryEndpoint | undefined>;
    try {
      endpoints = new Map(await Promise.all([...new Set(started.map((d) => d.endpointId))]
        .map(async (id) => [id, await this.deps.store.webhooks.deliveryEndpoint(id)] as const)));
    } catch (error) {
      // The work is durable already: its leases run out and a later claim attempts it.
      this.deps.logger.error("delivery start failed; left to the lease", { error });
      this.toStart -= started.length;
      for (const d of started) this.unhold(d.endpointId);
      return;
    }
    this.toStart -= started.length;
    for (const d of started) {
      const event = eventsById.get(d.eventId);
      const endpoint = endpoints.get(d.endpointId);
      if (!event || !endpoint) {
        // Deleted meanwhile (its deliveries went with it), or a caller's mistake: the lease runs out.
        this.unhold(d.endpointId);
        continue;
      }
      this.launch({
        delivery: {
          id: d.id, accountId: d.accountId, endpointId: d.endpointId, eventId: d.eventId, status: "pending", attemptCount: 0,
          nextAttemptAt: d.leaseUntil!, replayOf: d.replayOf, parkedReason: null, payloadAvailable: true, fields: event.fields,
          isTest: event.isTest, createdAt: d.createdAt, updatedAt: d.createdAt,
        },
        endpoint,
        body: event.body,
        upstreamSignature: event.upstreamSignature,
      });
    }
  }

  /** What the croner tick does each second: a purge once a minute (by the injected clock), then a wake. */
  private async onTick(): Promise<void> {
    const now = this.deps.clock.now();
    // The claim skips endpoints at their cap; their due retries are claimed once a slot frees.
    for (const [id, n] of this.leased) if (n >= PER_ENDPOINT_IN_FLIGHT) this.backlog.add(id);
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
    while (this.pumping || this.inFlight.size > 0 || this.starting.size > 0 || this.wakeScheduled) {
      await Promise.all([this.pumping, ...this.starting, ...this.inFlight]);
      if (this.wakeScheduled) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async purge(): Promise<void> {
    try {
      const removed = await this.deps.store.webhooks.purgeExpired(this.deps.clock.now(), RETENTION_MS);
      if (removed.deliveries + removed.events > 0) this.deps.logger.info("webhook retention purge", removed);
      this.deps.metrics.deliveriesPending.set(await this.deps.store.webhooks.pendingCount());
    } catch (error) {
      this.deps.logger.error("webhook retention purge failed", { error });
    }
  }

  start(): void {
    this.stopped = false;
    void this.deps.store.webhooks.recoverLeases(this.deps.clock.now()).then(() => this.wake());
    this.cron = new Cron("* * * * * *", { protect: true, catch: true, unref: true }, () => this.onTick());
  }

  /** Stops claiming; attempts already in flight finish and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cron?.stop();
    this.cron = null;
    await this.pumping;
    await Promise.all([...this.starting]);
    await Promise.all([...this.inFlight]);
  }
}
