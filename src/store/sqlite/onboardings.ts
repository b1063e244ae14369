import { eq } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import { fromOnboardingRow, toOnboardingRow } from "../onboarding-rows.ts";
import type { Onboarding, OnboardingStore } from "../onboardings.ts";
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

  async create(onboarding: Onboarding) {
    // The unique number index makes a second start of the same number find the first.
    this.db.insert(onboardings).values(toOnboardingRow(onboarding, this.sealer)).onConflictDoNothing().run();
    return (await this.byNumber(onboarding.phoneNumberId))!;
  }

  async save(onboarding: Onboarding) {
    const { id, ...row } = toOnboardingRow(onboarding, this.sealer);
    this.db.update(onboardings).set(row).where(eq(onboardings.id, id)).run();
  }
}
