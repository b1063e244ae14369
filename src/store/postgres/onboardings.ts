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
import type { AuditEntry } from "../audit.ts";
import { recordAudit, withAudit, withAuditStatement } from "./audit.ts";
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
  async create(onboarding: Onboarding, options: CreateOptions, audit?: AuditEntry): Promise<Created> {
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
      await recordAudit(raw, audit);
      return { onboarding };
    }).catch((error: unknown) => {
      if (error instanceof Refused) return error.created;
      throw error;
    });
  }

  async claim(id: string, accountId: string, now: number, until: number, audit?: AuditEntry) {
    const [row] = await withAudit(
      this.db,
      audit,
      (tx) =>
        tx
          .update(onboardings)
          .set({ leaseUntil: until })
          .where(
            and(
              eq(onboardings.id, id),
              eq(onboardings.accountId, accountId),
              or(isNull(onboardings.leaseUntil), lte(onboardings.leaseUntil, now)),
            ),
          )
          .returning(),
      (rows) => rows.length > 0,
    );
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

  async recordPreflight(id: string, field: string, preflight: Preflight, at: number, audit?: AuditEntry) {
    await this.setKey(id, "preflights", field, preflight, at, audit);
  }

  async recordSync(id: string, syncType: string, sync: SyncRequest, at: number, audit?: AuditEntry) {
    await this.setKey(id, "syncs", syncType, sync, at, audit);
  }

  /**
   * One key of a JSON object column set in place, so that two keys' writes never undo each other,
   * with its entry in the same statement. The value goes as text first: Bun.sql would send a
   * string bound straight to jsonb as a JSON string.
   */
  private async setKey(
    id: string,
    column: "preflights" | "syncs",
    key: string,
    value: unknown,
    at: number,
    audit?: AuditEntry,
  ) {
    const merged = sql`(${onboardings[column]}::jsonb || jsonb_build_object(${key}::text, ${JSON.stringify(value)}::text::jsonb))::text`;
    const change = this.db
      .update(onboardings)
      .set({ [column]: merged, updatedAt: at })
      .where(eq(onboardings.id, id))
      .returning({ id: onboardings.id });
    await withAuditStatement(this.db, change, audit);
  }

  async delete(id: string, audit?: AuditEntry) {
    const [row] = await withAudit(
      this.db,
      audit,
      (tx) => tx.delete(onboardings).where(eq(onboardings.id, id)).returning(),
      (rows) => rows.length > 0,
    );
    return row && fromOnboardingRow(row, this.sealer);
  }
}

/** A refusal found inside create's transaction: thrown to roll back what it inserted. */
class Refused extends Error {
  constructor(readonly created: Created) {
    super("refused");
  }
}
