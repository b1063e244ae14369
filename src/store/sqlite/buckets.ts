import { sql } from "drizzle-orm";
import type { BucketStore } from "../store.ts";
import type { BucketState } from "../types.ts";
import type { Db } from "./open.ts";
import { rateBuckets } from "./schema.ts";

export class SqliteBuckets implements BucketStore {
  /**
   * Prepared once: a flush writes every bucket touched in the last second (one per busy number),
   * and the query builder costs far more per row than the write itself.
   */
  private readonly upsert;

  constructor(private readonly db: Db) {
    this.upsert = db
      .insert(rateBuckets)
      .values({
        key: sql.placeholder("key"),
        tokens: sql.placeholder("tokens"),
        updatedAt: sql.placeholder("updatedAt"),
      })
      .onConflictDoUpdate({
        target: rateBuckets.key,
        set: { tokens: sql`excluded.tokens`, updatedAt: sql`excluded.updated_at` },
      })
      .prepare();
  }

  async loadAll() {
    return this.db.select().from(rateBuckets).all();
  }

  async saveMany(states: BucketState[]) {
    if (states.length === 0) return;
    this.db.transaction(() => {
      for (const { key, tokens, updatedAt } of states) this.upsert.run({ key, tokens, updatedAt });
    });
  }
}
