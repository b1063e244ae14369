import type { BucketStore } from "../store.ts";
import type { BucketState } from "../types.ts";
import type { PgDb } from "./connect.ts";
import { rateBuckets } from "./schema.ts";

/** The in-memory limiter's write-through (the scale-out mode shares its buckets in Redis instead). */
export class PgBuckets implements BucketStore {
  constructor(private readonly db: PgDb) {}

  async loadAll() {
    return this.db.select().from(rateBuckets);
  }

  /** One statement for the whole batch, however many buckets it holds. */
  async saveMany(states: BucketState[]) {
    if (states.length === 0) return;
    // One row per key (the last state given wins): ON CONFLICT may not touch a row twice.
    states = [...new Map(states.map((s) => [s.key, s])).values()];
    await this.db.$client.unsafe(
      `INSERT INTO rate_buckets (key, tokens, updated_at) SELECT * FROM unnest($1::text[], $2::float8[], $3::bigint[])
       ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at`,
      [states.map((s) => s.key), states.map((s) => s.tokens), states.map((s) => s.updatedAt)],
    );
  }
}
