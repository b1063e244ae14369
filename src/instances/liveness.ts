import type { InstanceRecord, StoppedInstance } from "../store/instances.ts";

/** What this instance last saw of another: its count of beats, and since when it has not moved. */
interface Watched {
  beats: number;
  since: number;
}

/**
 * Which other instances are alive, as one instance judges from its own rounds: another is taken
 * for dead once its count of beats has not moved for `deadAfterMs`, by this instance's clock. Each
 * instance stamps its beats with its own clock, but the judgement never compares two clocks, so
 * instances whose clocks disagree by any amount judge each other rightly. A round that comes
 * late (this instance was paused, or could not read the database) starts every count again: a
 * count that did not move while this one was not looking says nothing of the other.
 */
export class Liveness {
  private watched = new Map<string, Watched>();
  private lastRound: number | null = null;

  /** `heartbeatMs`: how often rounds come; one later than two of them is a gap. */
  constructor(
    private readonly deadAfterMs: number,
    private readonly heartbeatMs: number,
  ) {}

  /** One round: the other instances' records, read at `now`. */
  observe(others: InstanceRecord[], now: number): { live: InstanceRecord[]; stopped: StoppedInstance[] } {
    const gap = this.lastRound !== null && now - this.lastRound > 2 * this.heartbeatMs;
    this.lastRound = now;
    const watched = new Map<string, Watched>();
    const live: InstanceRecord[] = [];
    const stopped: StoppedInstance[] = [];
    for (const record of others) {
      const before = this.watched.get(record.id);
      const since = before && !gap && before.beats === record.beats ? before.since : now;
      watched.set(record.id, { beats: record.beats, since });
      if (now - since >= this.deadAfterMs) stopped.push({ id: record.id, beats: record.beats });
      else live.push(record);
    }
    this.watched = watched;
    return { live, stopped };
  }
}
