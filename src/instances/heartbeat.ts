import type { Deps } from "../deps.ts";
import type { Worker } from "../runtime/worker.ts";
import type { InstanceRecord } from "../store/instances.ts";
import { Liveness } from "./liveness.ts";

/** An instance as /healthz and /metrics list it. */
export type LiveInstance = Omit<InstanceRecord, "beats">;

/** How often a warning that repeats each beat (two processes under one id) is logged. */
const REPEAT_WARNING_MS = 60_000;

export type HeartbeatDeps = Pick<Deps, "store" | "clock" | "config" | "logger" | "metrics">;

/**
 * This instance's heartbeat (docs/operations.md#scale-out): every INSTANCE_HEARTBEAT_MS it beats in the database and
 * reads the others' beats; an instance whose beats stopped for INSTANCE_DEAD_AFTER_MS (see
 * Liveness) is taken for dead, and its leases are taken back at once, so that its deliveries in
 * flight are attempted again by whoever claims first instead of when their leases run out. The
 * instances it saw alive are what /healthz and /metrics list. On SQLite it is the only instance.
 */
export class Heartbeat implements Worker {
  private readonly liveness: Liveness;
  private timer: ReturnType<typeof setInterval> | null = null;
  private beating: Promise<void> | null = null;
  private startedAt: number | null = null;
  private others: InstanceRecord[] = [];
  private lastBeatAt: number | null = null;
  private sharedWarnedAt = -Infinity;

  constructor(private readonly deps: HeartbeatDeps) {
    const { heartbeatMs, deadAfterMs } = deps.config.instances;
    this.liveness = new Liveness(deadAfterMs, heartbeatMs);
  }

  start(): void {
    this.startedAt ??= this.deps.clock.now();
    this.publish();
    void this.beat();
    this.timer ??= setInterval(() => void this.beat(), this.deps.config.instances.heartbeatMs);
    this.timer.unref?.();
  }

  /** After the delivery worker's stop: its attempts have ended, so it holds no lease, and it is no longer listed. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await this.deps.store.instances
      .leave()
      .catch((error) => this.deps.logger.error("instance heartbeat: leaving failed", { error }));
  }

  /** One beat: at most one at a time (a beat asked for while one runs is that one). */
  beat(): Promise<void> {
    this.beating ??= this.round().finally(() => {
      this.beating = null;
    });
    return this.beating;
  }

  private async round(): Promise<void> {
    const { store, clock, logger, metrics, config } = this.deps;
    try {
      const now = clock.now();
      const beat = await store.instances.beat(now);
      this.lastBeatAt = now;
      if (beat.takenForDead)
        logger.warn(
          "instance heartbeat: the others took this instance for dead (it missed its beats), and took its leases back",
          {
            instance: store.instances.self,
            dead_after_ms: config.instances.deadAfterMs,
          },
        );
      if (beat.shared && now - this.sharedWarnedAt >= REPEAT_WARNING_MS) {
        this.sharedWarnedAt = now;
        logger.error(
          "instance heartbeat: another process beats under this instance's id; give each instance its own INSTANCE_ID",
          {
            instance: store.instances.self,
          },
        );
      }
      const { live, stopped } = this.liveness.observe(beat.others, now);
      this.others = live;
      this.publish();
      if (stopped.length === 0) return;
      const leases = await store.instances.takeBack(stopped);
      metrics.leasesTakenBack.inc(leases);
      logger.warn("instance heartbeat: instances stopped beating; their leases were taken back", {
        instances: stopped.map((s) => s.id),
        leases,
        dead_after_ms: config.instances.deadAfterMs,
      });
    } catch (error) {
      logger.error("instance heartbeat failed; the next one tries again", { error });
    }
  }

  private publish(): void {
    const gauge = this.deps.metrics.instancesLive;
    gauge.reset();
    for (const instance of this.live()) gauge.set({ id: instance.id }, 1);
  }

  /** This instance, then the others it saw beating, oldest first. */
  live(): LiveInstance[] {
    const now = this.deps.clock.now();
    const self = {
      id: this.deps.store.instances.self,
      startedAt: this.startedAt ?? now,
      beatAt: this.lastBeatAt ?? now,
    };
    const others = [...this.others].sort((a, b) => a.startedAt - b.startedAt || a.id.localeCompare(b.id));
    return [self, ...others.map(({ id, startedAt, beatAt }) => ({ id, startedAt, beatAt }))];
  }
}
