import type { Database } from "bun:sqlite";
import type { AttemptCounter, Reservation, SignInCountStore } from "../sign-in-counts.ts";

/** A full counter: thrown to roll the transaction back, with when it frees. */
class Full {
  constructor(readonly retryAt: number) {}
}

/** Sign-in attempts counted before their password is checked (src/store/sign-in-counts.ts). */
export class SqliteSignInCounts implements SignInCountStore {
  private readonly stmt;

  constructor(private readonly sqlite: Database) {
    this.stmt = {
      // A window that ended starts again at one; a full one takes nothing (no row comes back).
      reserve: sqlite.query<{ since: number }, Record<string, string | number>>(
        `INSERT INTO sign_in_counts (key, count, since) VALUES ($key, 1, $now)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN sign_in_counts.since <= $now - $window THEN 1 ELSE sign_in_counts.count + 1 END,
           since = CASE WHEN sign_in_counts.since <= $now - $window OR $sliding = 1 THEN $now ELSE sign_in_counts.since END
         WHERE sign_in_counts.since <= $now - $window OR sign_in_counts.count < $limit
         RETURNING since`,
      ),
      since: sqlite.query<{ since: number }, [string]>("SELECT since FROM sign_in_counts WHERE key = ?"),
      giveBack: sqlite.query(
        "UPDATE sign_in_counts SET count = count - 1 WHERE key = $key AND since = $since AND count > 0",
      ),
      forget: sqlite.query("DELETE FROM sign_in_counts WHERE key = ?"),
    };
  }

  async reserve(counters: readonly AttemptCounter[], now: number, windowMs: number): Promise<Reservation> {
    try {
      return this.sqlite
        .transaction(() => {
          const since = counters.map(({ key, limit, sliding }) => {
            const row = this.stmt.reserve.get({ key, now, window: windowMs, limit, sliding: sliding ? 1 : 0 });
            if (!row) throw new Full((this.stmt.since.get(key)?.since ?? now) + windowMs);
            return row.since;
          });
          return { held: true, since } as const;
        })
        .immediate();
    } catch (error) {
      if (error instanceof Full) return { held: false, retryAt: error.retryAt };
      throw error;
    }
  }

  async giveBack(key: string, since: number) {
    this.stmt.giveBack.run({ key, since });
  }

  async forget(key: string) {
    this.stmt.forget.run(key);
  }
}
