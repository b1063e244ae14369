import { and, desc, eq, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import {
  expiryConditions,
  fromOnboardingRow,
  onboardingWhere,
  runColumns,
  toOnboardingRow,
} from "../onboarding-rows.ts";
import {
  createPlan,
  live,
  overCap,
  type CreateOptions,
  type Created,
  type Onboarding,
  type OnboardingFilter,
  type OnboardingStore,
  type Preflight,
  type SyncRequest,
} from "../onboardings.ts";
import { transaction, type PgDb } from "./connect.ts";
import { onboardings } from "./schema.ts";

const where = onboardingWhere(onboardings);

export class PgOnboardings implements OnboardingStore {
  constructor(
    private readonly db: PgDb,
    private readonly sealer: Sealer,
  ) {}

  private async read(condition: SQL | undefined, now: number): Promise<Onboarding[]> {
    const rows = await this.db
      .select()
      .from(onboardings)
      .where(and(condition, expiryConditions(onboardings, now).notGone))
      .orderBy(desc(onboardings.updatedAt), desc(onboardings.id));
    return rows.flatMap((row) => live(fromOnboardingRow(row, this.sealer), now) ?? []);
  }

  async get(id: string, now: number) {
    return (await this.read(where.id(id), now))[0];
  }

  async byNumber(accountId: string, phoneNumberId: string, now: number) {
    return (await this.read(where.number(accountId, phoneNumberId), now))[0];
  }

  async unfinished(accountId: string, now: number) {
    return this.read(where.unfinished(accountId), now);
  }

  async list(filter: OnboardingFilter, now: number) {
    return this.read(where.filter(filter), now);
  }

  /**
   * The number's row is locked first (inserted when there is none, so two first signups of a
   * number meet on it), and the account's, so that two of its signups at once count each other
   * against the cap.
   */
  async create(onboarding: Onboarding, options: CreateOptions): Promise<Created> {
    const row = toOnboardingRow(onboarding, this.sealer);
    return transaction(this.db, async ({ orm, raw }) => {
      await raw.unsafe("SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE", [onboarding.accountId]);
      let stored: typeof onboardings.$inferSelect | undefined;
      // A row that conflicted and is gone when read (deleted meanwhile): insert again.
      for (;;) {
        if (
          (await orm.insert(onboardings).values(row).onConflictDoNothing().returning({ id: onboardings.id })).length > 0
        )
          break;
        [stored] = await orm
          .select()
          .from(onboardings)
          .where(eq(onboardings.phoneNumberId, onboarding.phoneNumberId))
          .for("update");
        if (stored) break;
      }
      const plan = createPlan(stored && fromOnboardingRow(stored, this.sealer), onboarding, options);
      if (typeof plan !== "string") return plan;
      const [{ unfinished }] = (await orm
        .select({ unfinished: sql<number>`count(*)::int` })
        .from(onboardings)
        .where(
          and(
            where.unfinished(onboarding.accountId),
            expiryConditions(onboardings, options.now).notGone,
            // The one just inserted is not yet counted against its own cap.
            sql`${onboardings.id} <> ${onboarding.id}`,
          ),
        )) as [{ unfinished: number }];
      if (overCap(onboarding, options, unfinished)) throw new Refused({ refused: "too_many" });
      if (plan === "replace")
        await orm.update(onboardings).set(row).where(eq(onboardings.phoneNumberId, onboarding.phoneNumberId));
      return { onboarding };
    }).catch((error: unknown) => {
      if (error instanceof Refused) return error.created;
      throw error;
    });
  }

  async claim(id: string, accountId: string, now: number, until: number) {
    const [row] = await this.db
      .update(onboardings)
      .set({ leaseUntil: until })
      .where(
        and(
          eq(onboardings.id, id),
          eq(onboardings.accountId, accountId),
          or(isNull(onboardings.leaseUntil), lte(onboardings.leaseUntil, now)),
        ),
      )
      .returning();
    return row && fromOnboardingRow(row, this.sealer);
  }

  async saveRun(onboarding: Onboarding, heldUntil: number) {
    const done = await this.db
      .update(onboardings)
      .set(runColumns(onboarding, this.sealer))
      .where(and(eq(onboardings.id, onboarding.id), eq(onboardings.leaseUntil, heldUntil)))
      .returning({ id: onboardings.id });
    return done.length > 0;
  }

  // One key of the JSON object set in place, so that two fields' writes never undo each other. The
  // value goes as text first: Bun.sql would send a string bound straight to jsonb as a JSON string.
  async recordPreflight(id: string, field: string, preflight: Preflight, at: number) {
    await this.db
      .update(onboardings)
      .set({
        preflights: sql`(${onboardings.preflights}::jsonb || jsonb_build_object(${field}::text, ${JSON.stringify(preflight)}::text::jsonb))::text`,
        updatedAt: at,
      })
      .where(eq(onboardings.id, id));
  }

  async recordSync(id: string, syncType: string, sync: SyncRequest, at: number) {
    await this.db
      .update(onboardings)
      .set({
        syncs: sql`(${onboardings.syncs}::jsonb || jsonb_build_object(${syncType}::text, ${JSON.stringify(sync)}::text::jsonb))::text`,
        updatedAt: at,
      })
      .where(eq(onboardings.id, id));
  }

  async delete(id: string) {
    const [row] = await this.db.delete(onboardings).where(eq(onboardings.id, id)).returning();
    return row && fromOnboardingRow(row, this.sealer);
  }
}

/** A refusal found inside create's transaction: thrown to roll back what it inserted. */
class Refused extends Error {
  constructor(readonly created: Created) {
    super("refused");
  }
}
