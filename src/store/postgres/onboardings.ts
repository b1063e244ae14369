import { eq } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import { fromOnboardingRow, toOnboardingRow } from "../onboarding-rows.ts";
import type { Onboarding, OnboardingStore } from "../onboardings.ts";
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

  async create(onboarding: Onboarding) {
    // The unique number index makes a second start of the same number find the first.
    await this.db.insert(onboardings).values(toOnboardingRow(onboarding, this.sealer)).onConflictDoNothing();
    return (await this.byNumber(onboarding.phoneNumberId))!;
  }

  async save(onboarding: Onboarding) {
    const { id, ...row } = toOnboardingRow(onboarding, this.sealer);
    await this.db.update(onboardings).set(row).where(eq(onboardings.id, id));
  }
}
