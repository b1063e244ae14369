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
import type { AuditWriter } from "./audit.ts";
import type { Db } from "./open.ts";
import { onboardings } from "./schema.ts";

const where = onboardingWhere(onboardings);

export class SqliteOnboardings implements OnboardingStore {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly audit: AuditWriter,
  ) {}

  private read(condition: SQL | undefined, now: number): Onboarding[] {
    return this.db
      .select()
      .from(onboardings)
      .where(and(condition, expiryConditions(onboardings, now).notGone))
      .orderBy(desc(onboardings.updatedAt), desc(onboardings.id))
      .all()
      .flatMap((row) => live(fromOnboardingRow(row, this.sealer), now) ?? []);
  }

  async get(id: string, now: number) {
    return this.read(where.id(id), now)[0];
  }

  async byNumber(accountId: string, phoneNumberId: string, now: number) {
    return this.read(where.number(accountId, phoneNumberId), now)[0];
  }

  async unfinished(accountId: string, now: number) {
    return this.read(where.unfinished(accountId), now);
  }

  async list(filter: OnboardingFilter, now: number) {
    return this.read(where.filter(filter), now);
  }

  // Immediate: the write lock is taken before the read, so another process (the CLI) cannot
  // change the row between the two.
  async create(onboarding: Onboarding, options: CreateOptions, audit?: AuditEntry): Promise<Created> {
    return this.db.transaction(
      (tx) => {
        const stored = tx
          .select()
          .from(onboardings)
          .where(eq(onboardings.phoneNumberId, onboarding.phoneNumberId))
          .get();
        const plan = createPlan(stored && fromOnboardingRow(stored, this.sealer), onboarding, options);
        if (typeof plan !== "string") return plan;
        const [{ unfinished }] = tx
          .select({ unfinished: sql<number>`count(*)` })
          .from(onboardings)
          .where(and(where.unfinished(onboarding.accountId), expiryConditions(onboardings, options.now).notGone))
          .all() as [{ unfinished: number }];
        if (overCap(onboarding, options, unfinished)) return { refused: "too_many" as const };
        const row = toOnboardingRow(onboarding, this.sealer);
        if (plan === "replace")
          tx.update(onboardings).set(row).where(eq(onboardings.phoneNumberId, onboarding.phoneNumberId)).run();
        else tx.insert(onboardings).values(row).run();
        this.audit.record(audit);
        return { onboarding };
      },
      { behavior: "immediate" },
    );
  }

  async claim(id: string, accountId: string, now: number, until: number, audit?: AuditEntry) {
    const [row] = this.audit.audited(
      audit,
      () =>
        this.db
          .update(onboardings)
          .set({ leaseUntil: until })
          .where(
            and(
              eq(onboardings.id, id),
              eq(onboardings.accountId, accountId),
              or(isNull(onboardings.leaseUntil), lte(onboardings.leaseUntil, now)),
            ),
          )
          .returning()
          .all(),
      (rows) => rows.length > 0,
    );
    return row && fromOnboardingRow(row, this.sealer);
  }

  async saveRun(onboarding: Onboarding, heldUntil: number) {
    const done = this.db
      .update(onboardings)
      .set(runColumns(onboarding, this.sealer))
      .where(and(eq(onboardings.id, onboarding.id), eq(onboardings.leaseUntil, heldUntil)))
      .returning({ id: onboardings.id })
      .all();
    return done.length > 0;
  }

  async recordPreflight(id: string, field: string, preflight: Preflight, at: number, audit?: AuditEntry) {
    this.setKey(id, "preflights", field, preflight, at, audit);
  }

  async recordSync(id: string, syncType: string, sync: SyncRequest, at: number, audit?: AuditEntry) {
    this.setKey(id, "syncs", syncType, sync, at, audit);
  }

  /** One key of a JSON object column set in place, so that two keys' writes never undo each other. */
  private setKey(
    id: string,
    column: "preflights" | "syncs",
    key: string,
    value: unknown,
    at: number,
    audit?: AuditEntry,
  ) {
    const set = { [column]: sql`json_set(${onboardings[column]}, ${`$."${key}"`}, json(${JSON.stringify(value)}))` };
    this.audit.audited(
      audit,
      () =>
        this.db
          .update(onboardings)
          .set({ ...set, updatedAt: at })
          .where(eq(onboardings.id, id))
          .returning({ id: onboardings.id })
          .all(),
      (rows) => rows.length > 0,
    );
  }

  async delete(id: string, audit?: AuditEntry) {
    const [row] = this.audit.audited(
      audit,
      () => this.db.delete(onboardings).where(eq(onboardings.id, id)).returning().all(),
      (rows) => rows.length > 0,
    );
    return row && fromOnboardingRow(row, this.sealer);
  }
}
