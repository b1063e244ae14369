import { Cron } from "croner";
import type { Worker } from "../runtime/deps.ts";
import type { Retention } from "../store/types.ts";
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
        const free = GLOBAL_IN_FLIGHT - this.inFlight.size;
        if (free <= 0) return;
        const batch = await this.deps.store.webhooks.claimDue(this.deps.clock.now(), {
          limit: free,
          perEndpoint: PER_ENDPOINT_IN_FLIGHT,
          leaseMs: this.leaseMs,
        });
        for (const claimed of batch) {
          const attempt = runAttempt(this.deps, claimed)
            .catch((error) => this.deps.logger.error("delivery attempt crashed", { delivery_id: claimed.delivery.id, error }))
            .finally(() => {
              this.inFlight.delete(attempt);
              this.wakeSoon();
            });
          this.inFlight.add(attempt);
        }
        if (batch.length < free) return;
      }
    } catch (error) {
      this.deps.logger.error("delivery queue claim failed", { error });
    }
  }

  /** What the croner tick does each second: a purge once a minute (by the injected clock), then a wake. */
  private async onTick(): Promise<void> {
    const now = this.deps.clock.now();
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
    while (this.pumping || this.inFlight.size > 0 || this.wakeScheduled) {
      await Promise.all([this.pumping, ...this.inFlight]);
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
    await Promise.all([...this.inFlight]);
  }
}
