import type { SQL } from "bun";
import { inBatches } from "../batches.ts";
import type { Beat, InstanceRecord, InstanceStore, StoppedInstance } from "../instances.ts";
import { afterTakingBack, SLOT_RELEASE } from "./slots.ts";

/**
 * Instances on PostgreSQL: each beats by counting up its row of `instances`; whoever sees a count
 * stop takes the instance's slots back (endpoint_slots, see schema.ts) in one statement, fenced on
 * that count, and wakes every instance's claims (pg_notify in the same commit).
 */
export class PgInstances implements InstanceStore {
  private startedAt: number | null = null;

  /** `incarnation`: this process's own, so that another process beating under `self` shows. */
  constructor(
    private readonly sql: SQL,
    readonly self: string,
    private readonly incarnation: string,
  ) {}

  async beat(now: number): Promise<Beat> {
    const first = this.startedAt === null;
    this.startedAt ??= now;
    // The records as they were before this beat (one snapshot for the statement), then the beat.
    const rows = (await this.sql.unsafe(
      `WITH before AS (SELECT id, incarnation, started_at, beat_at, beats FROM instances), me AS (
        INSERT INTO instances (id, incarnation, started_at, beat_at, beats) VALUES ($1, $2, $3, $4, 1)
        ON CONFLICT (id) DO UPDATE SET incarnation = excluded.incarnation, beat_at = excluded.beat_at,
          beats = instances.beats + 1,
          started_at = CASE WHEN instances.incarnation = excluded.incarnation THEN instances.started_at ELSE excluded.started_at END
      )
      SELECT * FROM before`,
      [this.self, this.incarnation, this.startedAt, now],
    )) as Record<string, unknown>[];
    const mine = rows.find((row) => row.id === this.self);
    return {
      others: rows
        .filter((row) => row.id !== this.self)
        .map(
          (row): InstanceRecord => ({
            id: row.id as string,
            startedAt: Number(row.started_at),
            beatAt: Number(row.beat_at),
            beats: Number(row.beats),
          }),
        ),
      takenForDead: !first && mine === undefined,
      shared: !first && mine !== undefined && mine.incarnation !== this.incarnation,
    };
  }

  async takeBack(stopped: StoppedInstance[]): Promise<number> {
    if (stopped.length === 0) return 0;
    const [row] = (await this.sql.unsafe(
      `WITH gone AS (
        DELETE FROM instances i USING unnest($1::text[], $2::bigint[]) AS x(id, beats)
        WHERE i.id = x.id AND i.beats = x.beats RETURNING i.id
      ), freed AS (
        UPDATE endpoint_slots s SET ${SLOT_RELEASE} FROM gone WHERE s.holder = gone.id RETURNING s.endpoint_id
      ), ${afterTakingBack("freed")}
      SELECT (SELECT count(*) FROM freed)::int AS leases, (SELECT count(*) FROM told)::int AS told`,
      [stopped.map((s) => s.id), stopped.map((s) => s.beats)],
    )) as { leases: number }[];
    return row?.leases ?? 0;
  }

  forgetGone(before: number, batch: number): Promise<number> {
    return inBatches(
      batch,
      async () =>
        (
          await this.sql.unsafe(
            "DELETE FROM instances WHERE id IN (SELECT id FROM instances WHERE beat_at < $1 LIMIT $2)",
            [before, batch],
          )
        ).count,
    );
  }

  async leave(): Promise<void> {
    await this.sql.unsafe("DELETE FROM instances WHERE id = $1 AND incarnation = $2", [this.self, this.incarnation]);
  }
}
