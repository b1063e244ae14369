import { and, desc, eq, isNull, lte, or, sql } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import { fromOnboardingRow, runColumns, toOnboardingRow } from "../onboarding-rows.ts";
import type { Onboarding, OnboardingStore, Preflight, SyncRequest } from "../onboardings.ts";
import type { PgDb } from "./connect.ts";
import { onboardings } from "./schema.ts";

export class PgOnboardings implements OnboardingStore {
  constructor(private readonly db: PgDb, private readonly sealer: Sealer) {}

  async get(id: string) {
    const [row] = await this.db.select().from(onboardings).where(eq(onboardings.id, id));
    return row && fromOnboardingRow(row, this.sealer);
  }

  async byNumber(phoneNumberId: string) {
    const [row] = await this.db.select().from(onboardings).where(eq(onboardings.phoneNumberId, phoneNumberId));
    return row && fromOnboardingRow(row, this.sealer);
  }

  async unfinished(accountId: string) {
    const rows = await this.db.select().from(onboardings).where(and(eq(onboardings.accountId, accountId), isNull(onboardings.finishedAt))).orderBy(desc(onboardings.updatedAt));
    return rows.map((row) => fromOnboardingRow(row, this.sealer));
  }

  async create(onboarding: Onboarding) {
    // The unique number index makes a second start of the same number find the first.
    await this.db.insert(onboardings).values(toOnboardingRow(onboarding, this.sealer)).onConflictDoNothing();
    return (await this.byNumber(onboarding.phoneNumberId))!;
  }

  async claim(id: string, now: number, until: number) {
    const [row] = await this.db.update(onboardings).set({ leaseUntil: until })
      .where(and(eq(onboardings.id, id), or(isNull(onboardings.leaseUntil), lte(onboardings.leaseUntil, now)))).returning();
    return row && fromOnboardingRow(row, this.sealer);
  }

  async saveRun(onboarding: Onboarding, heldUntil: number) {
    const done = await this.db.update(onboardings).set(runColumns(onboarding, this.sealer))
      .where(and(eq(onboardings.id, onboarding.id), eq(onboardings.leaseUntil, heldUntil))).returning({ id: onboardings.id });
    return done.length > 0;
  }

  // One key of the JSON object set in place, so that two fields' writes never undo each other. The
  // value goes as text first: Bun.sql would send a string bound straight to jsonb as a JSON string.
  async recordPreflight(id: string, field: string, preflight: Preflight, at: number) {
    await this.db.update(onboardings).set({ preflights: sql`(${onboardings.preflights}::jsonb || jsonb_build_object(${field}::text, ${JSON.stringify(preflight)}::text::jsonb))::text`, updatedAt: at })
      .where(eq(onboardings.id, id));
  }

  async recordSync(id: string, syncType: string, sync: SyncRequest, at: number) {
    await this.db.update(onboardings).set({ syncs: sql`(${onboardings.syncs}::jsonb || jsonb_build_object(${syncType}::text, ${JSON.stringify(sync)}::text::jsonb))::text`, updatedAt: at })
      .where(eq(onboardings.id, id));
  }
}
