import { sql } from "drizzle-orm";
import type { BucketStore } from "../store.ts";
import type { BucketState } from "../types.ts";
import type { Db } from "./open.ts";
import { rateBuckets } from "./schema.ts";

export class SqliteBuckets implements BucketStore {
  constructor(private readonly db: Db) {}
  async loadAll() {
    return this.db.select().from(rateBuckets).all();
  }
  async saveMany(states: BucketState[]) {
    if (states.length === 0) return;
    this.db.transaction((tx) => {
      for (const state of states) {
        tx.insert(rateBuckets)
          .values(state)
          .onConflictDoUpdate({
            target: rateBuckets.key,
            set: { tokens: sql`excluded.tokens`, updatedAt: sql`excluded.updated_at` },
          })
          .run();
      }
    });
  }
}
