import { Cron } from "croner";
import { AppError } from "../errors/catalog.ts";
import type { Logger } from "../observability/logger.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Worker } from "../runtime/worker.ts";
import type { Backups } from "./backups.ts";

/**
 * The server's backups as a Worker: stopping the server ends a backup in progress, and with
 * BACKUP_SCHEDULE (null: none) it takes them on schedule. The cron expression (croner's, in the
 * server's time zone) says when; the injected clock says what time it is, checked at each of its
 * seconds, so tests move time instead of waiting. A run due while another backup runs (one asked
 * for by hand) is skipped, as a cron job that finds its previous run still going is.
 */
export function scheduledBackups(
  backups: Backups,
  schedule: string | null,
  clock: Clock,
  logger: Logger,
  /** Takes the scheduled backup (the app records it as the service's, in the audit log). */
  take: () => Promise<unknown> = () => backups.create(),
) {
  const cron = schedule === null ? null : new Cron(schedule, { paused: true });
  const after = (ms: number) => cron?.nextRun(new Date(ms))?.getTime() ?? null;
  let due: number | null = null;
  let ticker: { stop(): void } | null = null;
  const tick = async () => {
    if (due === null || clock.now() < due) return;
    due = after(clock.now());
    try {
      await take();
    } catch (error) {
      // A failure is logged, counted and kept by Backups; the next run is still due.
      const busy = error instanceof AppError && error.errorName === "backup_running";
      if (busy) logger.info("scheduled backup skipped: another one is running");
    }
  };
  const worker = {
    /** Takes the scheduled backup when it is due by the clock (each of its seconds; tests call it). */
    tick,
    /** For /healthz with a schedule: when the newest verified backup was taken, and how long ago. */
    report(): Record<string, unknown> {
      if (cron === null) return {};
      const last = backups.lastSuccess();
      const age = last === null ? null : Math.max(0, Math.round((clock.now() - Date.parse(last.at)) / 1000));
      return { backup: { last_success_at: last?.at ?? null, age_seconds: age } };
    },
    start() {
      if (ticker || cron === null) return;
      due = after(clock.now());
      ticker = clock.everySecond(tick);
      backups.readLastSuccess().catch((error) => {
        logger.warn("the backups kept so far cannot be listed", { error: (error as Error).message });
      });
    },
    async stop() {
      ticker?.stop();
      ticker = null;
      await backups.stop();
    },
  };
  return worker satisfies Worker;
}
