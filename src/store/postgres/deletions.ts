import type { SQL } from "bun";
import { retried } from "./connect.ts";

/** What a deletion of deliveries removed: the deliveries (with their attempts) and the events they left orphaned. */
export type Removed = { deliveries: number; events: number };

/** Deliveries deleted per transaction by an endpoint's deletion (the retention purge's batch is its policy's). */
export const DELETE_BATCH = 1_000;

/** pg_try_advisory_xact_lock's keys: the claim's (per endpoint, in its SQL function) and the purge's. */
const LOCK_SPACE = 1_398_030_659;
const PURGE_LOCK = 1;

/** Deletions of deliveries in batches, as the retention purge and an endpoint's deletion make them. */
export class PgDeletions {
  constructor(private readonly sql: SQL) {}

  /**
   * Deletes the deliveries `select` picks (a bounded batch, by its LIMIT; with their attempts, by cascade)
   * and then the events no delivery refers to any more, in one transaction; null when `exclusive`
   * and another instance holds the purge's lock.
   */
  batch(select: string, params: unknown[], exclusive = false): Promise<Removed | null> {
    return retried(() =>
      this.sql.begin(async (tx) => {
        if (exclusive) {
          const [lock] = (await tx.unsafe("SELECT pg_try_advisory_xact_lock($1, $2) AS locked", [
            LOCK_SPACE,
            PURGE_LOCK,
          ])) as { locked: boolean }[];
          if (!lock?.locked) return null;
        }
        // Their due work with them (due_deliveries has no foreign key, see schema/queue.ts).
        const gone = (await tx.unsafe(
          `WITH gone AS (DELETE FROM deliveries WHERE id IN (${select}) RETURNING id, event_id),
          undue AS (DELETE FROM due_deliveries w USING gone WHERE w.delivery_id = gone.id)
          SELECT event_id FROM gone`,
          params,
        )) as { event_id: string }[];
        return {
          deliveries: gone.length,
          events: await this.dropOrphanEvents(
            tx,
            gone.map((row) => row.event_id),
          ),
        };
      }),
    );
  }

  /** Deletes those of these events that no delivery refers to any more; returns how many. */
  async dropOrphanEvents(tx: Pick<SQL, "unsafe">, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const gone = (await tx.unsafe(
      `DELETE FROM events e WHERE e.id = ANY($1::text[])
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id) RETURNING e.id`,
      [[...new Set(eventIds)]],
    )) as unknown[];
    return gone.length;
  }
}
