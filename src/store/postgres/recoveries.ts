import { and, desc, eq, lt } from "drizzle-orm";
import { fromRecoveryRow, toRecoveryRow } from "../recovery-rows.ts";
import type { Recovery, RecoveryStore } from "../recoveries.ts";
import type { PgDb } from "./connect.ts";
import { recoveries } from "./schema.ts";

export class PgRecoveries implements RecoveryStore {
  constructor(private readonly db: PgDb) {}

  async start(recovery: Recovery): Promise<{ recovery: Recovery; started: boolean }> {
    // The partial unique index lets one run per endpoint: a second start finds the first.
    const inserted = await this.db.insert(recoveries).values(toRecoveryRow(recovery)).onConflictDoNothing().returning();
    if (inserted.length > 0) return { recovery, started: true };
    const [running] = await this.db
      .select()
      .from(recoveries)
      .where(and(eq(recoveries.endpointId, recovery.endpointId), eq(recoveries.status, "running")));
    // Finished between the insert and this read: the endpoint is free again.
    if (!running) return this.start(recovery);
    return { recovery: fromRecoveryRow(running), started: false };
  }

  async get(id: string) {
    const [row] = await this.db.select().from(recoveries).where(eq(recoveries.id, id));
    return row && fromRecoveryRow(row);
  }

  async latest(endpointId: string) {
    const [row] = await this.db
      .select()
      .from(recoveries)
      .where(eq(recoveries.endpointId, endpointId))
      .orderBy(desc(recoveries.startedAt))
      .limit(1);
    return row && fromRecoveryRow(row);
  }

  async progress(id: string, expectedUpdatedAt: number, patch: Parameters<RecoveryStore["progress"]>[2]) {
    const { cursor, ...rest } = patch;
    const done = await this.db
      .update(recoveries)
      .set({ ...rest, cursorAt: cursor?.createdAt ?? null, cursorId: cursor?.id ?? null })
      .where(and(eq(recoveries.id, id), eq(recoveries.updatedAt, expectedUpdatedAt), eq(recoveries.status, "running")))
      .returning();
    return done.length > 0;
  }

  async takeOver(id: string, staleBefore: number, now: number) {
    const [row] = await this.db
      .update(recoveries)
      .set({ updatedAt: now })
      .where(and(eq(recoveries.id, id), eq(recoveries.status, "running"), lt(recoveries.updatedAt, staleBefore)))
      .returning();
    return row && fromRecoveryRow(row);
  }
}
