/**
 * One count of sign-in attempts (src/auth/throttle.ts). An attempt is counted before its password
 * is checked, so that however many arrive at once no more than `limit` are ever checked in a
 * window; a right password gives its attempt back.
 */
export interface AttemptCounter {
  /** What is counted, as an opaque hash. */
  key: string;
  /** Attempts a window holds; past them, an attempt is refused. */
  limit: number;
  /**
   * true: the window restarts at each counted attempt, so the count is forgotten only after a
   * whole quiet window (never more than `limit` in any window's span); false: it runs from the
   * first attempt counted in it.
   */
  sliding: boolean;
}

/** Every counter took the attempt (when each one's window began), or none did, and when the full one frees. */
export type Reservation = { held: true; since: readonly number[] } | { held: false; retryAt: number };

export interface SignInCountStore {
  /** Counts one attempt on each of `counters`, in one transaction: on all of them, or, when one is full, on none. */
  reserve(counters: readonly AttemptCounter[], now: number, windowMs: number): Promise<Reservation>;
  /** Takes back one attempt counted in the window that began at `since` (a later window is left alone). */
  giveBack(key: string, since: number): Promise<void>;
  /** Forgets a count. */
  forget(key: string): Promise<void>;
}
