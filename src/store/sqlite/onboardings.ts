import { and, desc, eq, isNull, lte, or, sql } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import { fromOnboardingRow, runColumns, toOnboardingRow } from "../onboarding-rows.ts";
import type { Onboarding, OnboardingStore, Preflight, SyncRequest } from "../onboardings.ts";
import type { Db } from "./open.ts";
import { onboardings } from "./schema.ts";

export class SqliteOnboardings implements OnboardingStore {
  constructor(private readonly db: Db, private readonly sealer: Sealer) {}

  async get(id: string) {
    const row = this.db.select().from(onboardings).where(eq(onboardings.id, id)).get();
    return row && fromOnboardingRow(row, this.sealer);
  }

  async byNumber(phoneNumberId: string) {
    const row = this.db.select().from(onboardings).where(eq(onboardings.phoneNumberId, phoneNumberId)).get();
    return row && fromOnboardingRow(row, this.sealer);
  }

  async unfinished(accountId: string) {
    const rows = this.db.select().from(onboardings).where(and(eq(onboardings.accountId, accountId), isNull(onboardings.finishedAt))).orderBy(desc(onboardings.updatedAt)).all();
    return rows.map((row) => fromOnboardingRow(row, this.sealer));
  }

  async create(onboarding: Onboarding) {
    // The unique number index makes a second start of the same number find the first.
    this.db.insert(onboardings).values(toOnboardingRow(onboarding, this.sealer)).onConflictDoNothing().run();
    return (await this.byNumber(onboarding.phoneNumberId))!;
  }

  async claim(id: string, now: number, until: number) {
    const [row] = this.db.update(onboardings).set({ leaseUntil: until })
      .where(and(eq(onboardings.id, id), or(isNull(onboardings.leaseUntil), lte(onboardings.leaseUntil, now)))).returning().all();
    return row && fromOnboardingRow(row, this.sealer);
  }

  async saveRun(onboarding: Onboarding, heldUntil: number) {
    const done = this.db.update(onboardings).set(runColumns(onboarding, this.sealer))
      .where(and(eq(onboardings.id, onboarding.id), eq(onboardings.leaseUntil, heldUntil))).returning({ id: onboardings.id }).all();
    return done.length > 0;
  }

  // One key of the JSON object set in place, so that two fields' writes never undo each other.
  async recordPreflight(id: string, field: string, preflight: Preflight, at: number) {
    this.db.update(onboardings).set({ preflights: sql`json_set(${onboardings.preflights}, ${`$."${field}"`}, json(${JSON.stringify(preflight)}))`, updatedAt: at })
      .where(eq(onboardings.id, id)).run();
  }

  async recordSync(id: string, syncType: string, sync: SyncRequest, at: number) {
    this.db.update(onboardings).set({ syncs: sql`json_set(${onboardings.syncs}, ${`$."${syncType}"`}, json(${JSON.stringify(sync)}))`, updatedAt: at })
      .where(eq(onboardings.id, id)).run();
  }
}
