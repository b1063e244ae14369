import type { Deps } from "../deps.ts";
import type { Worker } from "../runtime/worker.ts";
import { cutOf, RETENTION_POLICIES, type RetentionPolicy } from "./policies.ts";

/** How often, by the injected clock, the policies run (each one's window is far longer). */
export const RETENTION_EVERY_MS = 60_000;

/** What one policy's run did: the rows it removed, or null when it failed (and was logged). */
export interface PolicyRun {
  policy: string;
  removed: number | null;
}

export type RetentionDeps = Pick<Deps, "store" | "clock" | "logger" | "metrics" | "config">;

/**
 * Runs every retention policy in turn, once a minute on the clock's tick (the first tick after
 * start runs them at once). A failing policy is logged and counted and the next one runs; runs
 * never overlap. Each policy's rows removed and time taken go to the metrics, and a log line
 * says what a policy removed when it removed something.
 */
export class RetentionWorker implements Worker {
  private ticker: { stop(): void } | null = null;
  private lastRun = Number.NEGATIVE_INFINITY;
  private running: Promise<PolicyRun[]> | null = null;
  private stopped = false;

  constructor(
    private readonly deps: RetentionDeps,
    private readonly policies: readonly RetentionPolicy[] = RETENTION_POLICIES,
  ) {}

  /** Runs every policy now, after the run in progress if there is one (tests drive it so). */
  async run(): Promise<PolicyRun[]> {
    while (this.running) await this.running;
    this.running = this.runPolicies();
    try {
      return await this.running;
    } finally {
      this.running = null;
    }
  }

  private async runPolicies(): Promise<PolicyRun[]> {
    const runs: PolicyRun[] = [];
    for (const policy of this.policies) {
      if (this.stopped) break;
      runs.push({ policy: policy.name, removed: await this.runPolicy(policy) });
    }
    return runs;
  }

  private async runPolicy(policy: RetentionPolicy): Promise<number | null> {
    const { store, clock, logger, metrics, config } = this.deps;
    const labels = { policy: policy.name };
    const started = performance.now();
    try {
      const removed = await policy.purge(
        store,
        cutOf(policy.window, clock.now(), store.directory.accounts(), config),
        policy.batch,
      );
      const ms = performance.now() - started;
      metrics.retentionSeconds.observe(labels, ms / 1000);
      metrics.retentionRemoved.inc(labels, removed);
      if (removed > 0) logger.info("retention purge", { policy: policy.name, removed, ms: Math.round(ms) });
      return removed;
    } catch (error) {
      metrics.retentionFailures.inc(labels);
      logger.error("retention purge failed", { policy: policy.name, error });
      return null;
    }
  }

  private async onTick(): Promise<void> {
    const now = this.deps.clock.now();
    if (now - this.lastRun < RETENTION_EVERY_MS) return;
    this.lastRun = now;
    await this.run();
  }

  start(): void {
    this.stopped = false;
    this.ticker ??= this.deps.clock.everySecond(() => this.onTick());
  }

  /** Stops the tick; a run in progress ends after the policy it is at. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ticker?.stop();
    this.ticker = null;
    await this.running;
  }
}
