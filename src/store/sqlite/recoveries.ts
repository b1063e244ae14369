import { and, desc, eq, lt } from "drizzle-orm";
import { fromRecoveryRow, toRecoveryRow } from "../recovery-rows.ts";
import type { Recovery, RecoveryStore } from "../recoveries.ts";
import type { Db } from "./open.ts";
import { recoveries } from "./schema.ts";

export class SqliteRecoveries implements RecoveryStore {
  constructor(private readonly db: Db) {}

  async start(recovery: Recovery): Promise<{ recovery: Recovery; started: boolean }> {
    // The partial unique index lets one run per endpoint: a second start finds the first.
    const inserted = this.db.insert(recoveries).values(toRecoveryRow(recovery)).onConflictDoNothing().returning().all();
    if (inserted.length > 0) return { recovery, started: true };
    const running = this.db
      .select()
      .from(recoveries)
      .where(and(eq(recoveries.endpointId, recovery.endpointId), eq(recoveries.status, "running")))
      .get();
    // Finished between the insert and this read: the endpoint is free again.
    if (!running) return this.start(recovery);
    return { recovery: fromRecoveryRow(running), started: false };
  }

  async get(id: string) {
    const row = this.db.select().from(recoveries).where(eq(recoveries.id, id)).get();
    return row && fromRecoveryRow(row);
  }

  async latest(endpointId: string) {
    const row = this.db
      .select()
      .from(recoveries)
      .where(eq(recoveries.endpointId, endpointId))
      .orderBy(desc(recoveries.startedAt))
      .limit(1)
      .get();
    return row && fromRecoveryRow(row);
  }

  async progress(id: string, expectedUpdatedAt: number, patch: Parameters<RecoveryStore["progress"]>[2]) {
    const { cursor, ...rest } = patch;
    const done = this.db
      .update(recoveries)
      .set({ ...rest, cursorAt: cursor?.createdAt ?? null, cursorId: cursor?.id ?? null })
      .where(and(eq(recoveries.id, id), eq(recoveries.updatedAt, expectedUpdatedAt), eq(recoveries.status, "running")))
      .returning()
      .all();
    return done.length > 0;
  }

  async takeOver(id: string, staleBefore: number, now: number) {
    const [row] = this.db
      .update(recoveries)
      .set({ updatedAt: now })
      .where(and(eq(recoveries.id, id), eq(recoveries.status, "running"), lt(recoveries.updatedAt, staleBefore)))
      .returning()
      .all();
    return row && fromRecoveryRow(row);
  }
}
