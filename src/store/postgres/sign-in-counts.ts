import type { AttemptCounter, Reservation, SignInCountStore } from "../sign-in-counts.ts";
import { transaction, type PgDb } from "./connect.ts";

/** A full counter: thrown to roll the transaction back, with when it frees. */
class Full {
  constructor(readonly retryAt: number) {}
}

/**
 * A window that ended starts again at one; a full one takes nothing (no row comes back). The
 * upsert locks the counter's row, so attempts at once are counted one after another.
 */
const RESERVE = `INSERT INTO sign_in_counts AS c (key, count, since) VALUES ($1, 1, $2::bigint)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN c.since <= $2::bigint - $3::bigint THEN 1 ELSE c.count + 1 END,
    since = CASE WHEN c.since <= $2::bigint - $3::bigint OR $5::boolean THEN $2::bigint ELSE c.since END
  WHERE c.since <= $2::bigint - $3::bigint OR c.count < $4::int
  RETURNING since`;

/** Sign-in attempts counted before their password is checked (src/store/sign-in-counts.ts). */
export class PgSignInCounts implements SignInCountStore {
  constructor(private readonly db: PgDb) {}

  async reserve(counters: readonly AttemptCounter[], now: number, windowMs: number): Promise<Reservation> {
    try {
      // Counters in the order given (a sign-in's own before its address's): no two transactions
      // wait for each other's rows in opposite orders.
      return await transaction(this.db, async ({ raw }) => {
        const since: number[] = [];
        for (const { key, limit, sliding } of counters) {
          const [row] = await raw.unsafe(RESERVE, [key, now, windowMs, limit, sliding]);
          if (!row) {
            const [held] = await raw.unsafe("SELECT since FROM sign_in_counts WHERE key = $1", [key]);
            throw new Full(Number(held?.since ?? now) + windowMs);
          }
          since.push(Number(row.since));
        }
        return { held: true, since } as const;
      });
    } catch (error) {
      if (error instanceof Full) return { held: false, retryAt: error.retryAt };
      throw error;
    }
  }

  async giveBack(key: string, since: number) {
    await this.db.$client.unsafe(
      "UPDATE sign_in_counts SET count = count - 1 WHERE key = $1 AND since = $2::bigint AND count > 0",
      [key, since],
    );
  }

  async forget(key: string) {
    await this.db.$client.unsafe("DELETE FROM sign_in_counts WHERE key = $1", [key]);
  }
}
