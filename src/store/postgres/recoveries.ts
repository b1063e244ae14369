import { and, desc, eq, lt } from "drizzle-orm";
import { fromRecoveryRow, startAnswer, theRunningOne, toRecoveryRow } from "../recovery-rows.ts";
import type { AuditEntry } from "../audit.ts";
import type { Recovery, RecoveryStore } from "../recoveries.ts";
import { withAudit } from "./audit.ts";
import type { PgDb } from "./connect.ts";
import { recoveries } from "./schema.ts";

export class PgRecoveries implements RecoveryStore {
  constructor(private readonly db: PgDb) {}

  async start(recovery: Recovery, audit?: AuditEntry) {
    const rows = await withAudit(
      this.db,
      audit,
      (orm) =>
        orm
          .insert(recoveries)
          .values(toRecoveryRow(recovery))
          .onConflictDoUpdate(theRunningOne(recoveries))
          .returning(),
      // The entry only when this start's row is the one running.
      ([row]) => row?.id === recovery.id,
    );
    return startAnswer(rows, recovery);
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
