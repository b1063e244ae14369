import type { Database, Statement } from "bun:sqlite";
import { inBatches } from "../batches.ts";
import type { Row } from "../delivery-rows.ts";
import { statement, type Params } from "./open.ts";

/** What a deletion of deliveries removed: the deliveries (with their attempts) and the events they left orphaned. */
export type Removed = { deliveries: number; events: number };

/**
 * Deliveries deleted per transaction by an endpoint's deletion: a few milliseconds of the server's
 * thread (bench/webhooks/purge.ts). The retention purge's batch is its policy's (src/retention/).
 */
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
   * A transaction that deletes what `deleting` does (a bounded batch of deliveries, RETURNING
   * their event_id), then the events it left orphaned.
   */
  batch<P extends Params>(deleting: Statement<{ event_id: string }, [P]>): (params: P) => Removed {
    return this.sqlite.transaction((params: P) => {
      const gone = deleting.all(params);
      return { deliveries: gone.length, events: this.dropOrphanEvents(gone.map((row) => row.event_id)) };
    });
  }

  /**
   * Runs `step` (at most `size` deliveries) until it deletes fewer than `size`, answering the
   * requests that came meanwhile between steps. Returns what all removed.
   */
  async inBatches(size: number, step: () => Removed): Promise<Removed> {
    const removed = { deliveries: 0, events: 0 };
    await inBatches(size, () => {
      const done = step();
      removed.events += done.events;
      removed.deliveries += done.deliveries;
      return done.deliveries;
    });
    return removed;
  }

  /** Deletes those of these events that no delivery refers to any more; returns how many. */
  dropOrphanEvents(eventIds: string[]): number {
    let dropped = 0;
    for (const event of new Set(eventIds)) dropped += this.dropOrphanEvent.run({ event }).changes;
    return dropped;
  }
}
