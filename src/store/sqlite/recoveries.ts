import { and, desc, eq, lt } from "drizzle-orm";
import { fromRecoveryRow, startAnswer, theRunningOne, toRecoveryRow } from "../recovery-rows.ts";
import type { AuditEntry } from "../audit.ts";
import type { Recovery, RecoveryStore } from "../recoveries.ts";
import type { AuditWriter } from "./audit.ts";
import type { Db } from "./open.ts";
import { recoveries } from "./schema.ts";

export class SqliteRecoveries implements RecoveryStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
  ) {}

  async start(recovery: Recovery, audit?: AuditEntry) {
    const insert = this.db.insert(recoveries).values(toRecoveryRow(recovery));
    const rows = this.audit.audited(
      audit,
      () => insert.onConflictDoUpdate(theRunningOne(recoveries)).returning().all(),
      // The entry only when this start's row is the one running.
      ([row]) => row?.id === recovery.id,
    );
    return startAnswer(rows, recovery);
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
