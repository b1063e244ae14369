import type { Database, Statement } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Row } from "../delivery-rows.ts";
import { statement, type Params } from "./open.ts";

/** What a deletion of deliveries removed: the deliveries (with their attempts) and the events they left orphaned. */
export type Removed = { deliveries: number; events: number };

/** Deliveries deleted per transaction: a few milliseconds of the server's thread (bench/webhooks/purge.ts). */
export const DELETE_BATCH = 100;

/**
 * Deletions of deliveries in batches, as the retention purge and an endpoint's deletion make them:
 * a minute of deliveries at a few thousand a second, deleted at once, held the thread for seconds.
 */
export class SqliteDeletions {
  private readonly dropOrphanEvent: Statement<Row, [{ event: string }]>;

  constructor(private readonly sqlite: Database) {
    // An event lives as long as one of its deliveries (replays included) does.
    this.dropOrphanEvent = statement(
      sqlite,
      "DELETE FROM events WHERE id = $event AND NOT EXISTS (SELECT 1 FROM deliveries WHERE event_id = $event)",
    );
  }

  /**
   * A transaction that deletes what `deleting` does (up to DELETE_BATCH deliveries, RETURNING
   * their event_id), then the events it left orphaned.
   */
  batch<P extends Params>(deleting: Statement<{ event_id: string }, [P]>): (params: P) => Removed {
    return this.sqlite.transaction((params: P) => {
      const gone = deleting.all(params);
      return { deliveries: gone.length, events: this.dropOrphanEvents(gone.map((row) => row.event_id)) };
    });
  }

  /**
   * Runs `batch` until it deletes fewer than DELETE_BATCH deliveries, answering the requests that
   * came meanwhile between batches. Returns what all removed.
   */
  async inBatches(batch: () => Removed): Promise<Removed> {
    const removed = { deliveries: 0, events: 0 };
    for (;;) {
      const done = batch();
      removed.deliveries += done.deliveries;
      removed.events += done.events;
      if (done.deliveries < DELETE_BATCH) return removed;
      await nextTurn();
    }
  }

  /** Deletes those of these events that no delivery refers to any more; returns how many. */
  dropOrphanEvents(eventIds: string[]): number {
    let dropped = 0;
    for (const event of new Set(eventIds)) dropped += this.dropOrphanEvent.run({ event }).changes;
    return dropped;
  }
}
