import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Runs `step` (one bounded deletion, its own transaction) until it removes fewer than `batch`
 * rows, letting the event loop turn between steps: on SQLite the server answers the requests that
 * came meanwhile, so no purge holds its thread for longer than one step. Returns the rows removed.
 */
export async function inBatches(batch: number, step: () => number | Promise<number>): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await step();
    removed += n;
    if (n < batch) return removed;
    await nextTurn();
  }
}
