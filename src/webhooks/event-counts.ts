import type { Deps } from "../deps.ts";
import { intervalWorker } from "../runtime/interval-worker.ts";
import type { Worker } from "../runtime/worker.ts";
import { hourOf } from "../store/hours.ts";
import type { EventHour } from "../store/overview.ts";

/** How often the counts of accepted events are added to the store. */
const FLUSH_EVERY_MS = 1000;

/**
 * Every upstream event ingress accepts, counted per hour for the operator's overview, and whether
 * it went to no endpoint (no known WABA, or no endpoint takes its fields). Events that reach no
 * endpoint are not stored, so the stored events cannot count them. Counted in memory and added to
 * the store about once a second (and at stop), never a write of its own per event: a count lost to
 * a crash is at most a second's.
 */
export function eventCounter(deps: Pick<Deps, "store" | "clock" | "logger">) {
  let pending = new Map<number, EventHour>();
  const flush = async () => {
    if (pending.size === 0) return;
    const counts = [...pending.values()];
    pending = new Map();
    try {
      await deps.store.overview.addEventCounts(counts);
    } catch (error) {
      // Kept for the next flush, added to what came meanwhile.
      for (const c of counts) add(c.hour, c.received, c.unrouted);
      throw error;
    }
  };
  const add = (hour: number, received: number, unrouted: number) => {
    const row = pending.get(hour) ?? { hour, received: 0, unrouted: 0 };
    row.received += received;
    row.unrouted += unrouted;
    pending.set(hour, row);
  };
  const worker: Worker = intervalWorker("event counts", FLUSH_EVERY_MS, flush, deps.logger);
  return {
    /** One accepted event; `routed`: it made at least one delivery. */
    count(routed: boolean) {
      add(hourOf(deps.clock.now()), 1, routed ? 0 : 1);
    },
    /** Adds what was counted to the store now (tests; the worker does it every second). */
    flush,
    worker,
  };
}

export type EventCounter = ReturnType<typeof eventCounter>;
