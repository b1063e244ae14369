/**
 * The instances working the delivery queue, as the database knows them (src/instances/ watches
 * them). Each store speaks for one instance, `self`: the holder its leases name. On a shared
 * backend each instance beats; one whose beats stop is taken for dead by any other, which takes
 * its leases back at once. On SQLite one server holds the file, and nobody else beats.
 */

/** One instance's record. */
export interface InstanceRecord {
  id: string;
  startedAt: number;
  /** Its last beat, by its own clock (shown; liveness is judged by `beats` moving, see src/instances/liveness.ts). */
  beatAt: number;
  /** How many times it has beaten: another instance watches this move. */
  beats: number;
}

/** What one beat found. */
export interface Beat {
  /** Every other instance registered, as read in the beat's statement. */
  others: InstanceRecord[];
  /** This instance's record was gone: others took it for dead (and took its leases back) while it did not beat. */
  takenForDead: boolean;
  /** Another process beat under this instance's id since its last beat (two instances given one INSTANCE_ID). */
  shared: boolean;
}

/** An instance taken for dead, with the count of beats it was seen stopped at. */
export interface StoppedInstance {
  id: string;
  beats: number;
}

export interface InstanceStore {
  /** This instance's id: what its leases name as their holder. */
  readonly self: string;
  /**
   * Beats once at `now`: registers this instance (started at its first beat) when its record is
   * absent, and counts the beat.
   */
  beat(now: number): Promise<Beat>;
  /**
   * Takes back the leases of these instances, each only if its beats are still the count given
   * (one that beat since is alive after all): their deliveries are claimable at once by any
   * instance, a completion under those leases records nothing, and the instance is forgotten.
   * Returns how many leases were taken back.
   */
  takeBack(stopped: StoppedInstance[]): Promise<number>;
  /** Forgets this instance (a clean stop, once its attempts have ended): it is no longer listed as live. */
  leave(): Promise<void>;
  /**
   * Forgets instances whose last beat (by their own clock) is before `before`, `batch` at a time:
   * ones that died with no other instance alive to take them for dead, or whose id was never
   * used again. Their leases ran out long before. Returns how many it forgot.
   */
  forgetGone(before: number, batch: number): Promise<number>;
}
