import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import { CachedDirectory, defined } from "../cached-directory.ts";
import { connectRefusal, type Connected, type Refusal } from "../ownership.ts";
import { openWaba, reconnectedWaba, sealWaba } from "../sealed-rows.ts";
import type { AuditEntry } from "../audit.ts";
import { EmailTaken, writtenRow } from "../errors.ts";
import type { Directory, NumberPatch, WabaPatch } from "../store.ts";
import { userRow, type Account, type ApiKey, type NewUser, type PhoneNumber, type Waba } from "../types.ts";
import { recordAudit } from "./audit.ts";
import type { ChangeFeed, ChangeKind, FedCache } from "./changes.ts";
import { transaction, type PgDb, type Tx } from "./connect.ts";
import { accounts, apiKeys, numbers, users, wabas } from "./schema.ts";

/**
 * The directory in memory, as in SQLite, kept equal to PostgreSQL on every instance by the change
 * feed (changes.ts): each write commits with its change record and goes into this instance's
 * cache from the row the database returned; other instances read the row again when told.
 */
export class PgDirectory extends CachedDirectory implements Directory, FedCache {
  constructor(
    private readonly db: PgDb,
    private readonly sealer: Sealer,
    private readonly feed: ChangeFeed,
  ) {
    super();
    feed.register(this, ["account", "api_key", "waba", "number"]);
  }

  async loadAll(): Promise<void> {
    const [accountRows, keyRows, wabaRows, numberRows] = await Promise.all([
      this.db.select().from(accounts),
      this.db.select().from(apiKeys),
      this.db.select().from(wabas),
      this.db.select().from(numbers),
    ]);
    this.clearCache();
    for (const row of accountRows) this.cacheAccount(row);
    for (const row of keyRows) this.cacheKey(row);
    for (const row of wabaRows) this.cacheWaba(this.toWaba(row));
    for (const row of numberRows) this.cacheNumber(row);
  }

  async reload(kind: ChangeKind, ids: string[]): Promise<void> {
    switch (kind) {
      case "account":
        return this.reloaded(
          this.db.select().from(accounts).where(inArray(accounts.id, ids)),
          ids,
          (id) => this.forgetAccount(id),
          (row) => this.cacheAccount(row),
        );
      case "api_key":
        return this.reloaded(
          this.db.select().from(apiKeys).where(inArray(apiKeys.id, ids)),
          ids,
          (id) => this.forgetKey(id),
          (row) => this.cacheKey(row),
        );
      case "waba":
        return this.reloaded(
          this.db.select().from(wabas).where(inArray(wabas.wabaId, ids)),
          ids,
          (id) => this.forgetWaba(id),
          (row) => this.cacheWaba(this.toWaba(row)),
        );
      case "number":
        return this.reloaded(
          this.db.select().from(numbers).where(inArray(numbers.phoneNumberId, ids)),
          ids,
          (id) => this.forgetNumber(id),
          (row) => this.cacheNumber(row),
        );
      case "endpoint":
        return;
    }
  }

  /** The cache's entries of `ids` replaced by the rows read (an id with none is forgotten). */
  private async reloaded<R>(
    read: PromiseLike<R[]>,
    ids: string[],
    forget: (id: string) => void,
    cache: (row: R) => void,
  ): Promise<void> {
    const rows = await read;
    for (const id of ids) forget(id);
    for (const row of rows) cache(row);
  }

  refresh(): Promise<boolean> {
    return this.feed.refresh();
  }

  /**
   * Commits `write` with its change record and its audit entry (when it wrote a row), then puts
   * what it returned in the cache, in the feed's order: a reload of an older change that was under
   * way cannot overwrite it.
   */
  private async write<T>(
    kind: ChangeKind,
    id: string,
    write: (tx: Tx["orm"]) => Promise<T | undefined>,
    cache: (row: T) => void,
    audit: AuditEntry | AuditEntry[] | undefined,
  ): Promise<T | undefined> {
    const row = await transaction(this.db, async (tx) => {
      const written = await write(tx.orm);
      if (written !== undefined) {
        await this.feed.record(tx, kind, [id]);
        for (const entry of [audit].flat()) await recordAudit(tx.raw, entry);
      }
      return written;
    });
    if (row !== undefined) await this.feed.serially(() => cache(row));
    return row;
  }

  private toWaba(row: typeof wabas.$inferSelect): Waba {
    return openWaba(row, this.sealer);
  }

  async createAccount(account: Account, audit?: AuditEntry) {
    const row = await this.write(
      "account",
      account.id,
      async (tx) => (await tx.insert(accounts).values(account).returning())[0],
      (r) => this.cacheAccount(r),
      audit,
    );
    return { ...writtenRow(row, `account ${account.id}`) };
  }
  async createAccountWithUser(account: Account, user: NewUser, audit?: { account: AuditEntry; user: AuditEntry }) {
    try {
      const row = await this.write(
        "account",
        account.id,
        async (tx) => {
          const [created] = await tx.insert(accounts).values(account).returning();
          // The email taken: throwing rolls the account back with the transaction.
          if ((await tx.insert(users).values(userRow(user)).onConflictDoNothing().returning()).length === 0)
            throw new EmailTaken();
          return created;
        },
        (r) => this.cacheAccount(r),
        audit && [audit.account, audit.user],
      );
      return { ...writtenRow(row, `account ${account.id}`) };
    } catch (error) {
      if (error instanceof EmailTaken) return null;
      throw error;
    }
  }
  async updateAccount(id: string, given: Partial<Omit<Account, "id" | "createdAt">>, audit?: AuditEntry) {
    const patch = defined(given);
    const row = await this.write(
      "account",
      id,
      async (tx) =>
        Object.keys(patch).length === 0
          ? (await tx.select().from(accounts).where(eq(accounts.id, id)))[0]
          : (await tx.update(accounts).set(patch).where(eq(accounts.id, id)).returning())[0],
      (r) => this.cacheAccount(r),
      audit,
    );
    return row && { ...row };
  }

  async createApiKey(key: ApiKey, audit?: AuditEntry) {
    const row = await this.write(
      "api_key",
      key.id,
      async (tx) => (await tx.insert(apiKeys).values(key).returning())[0],
      (r) => this.cacheKey(r),
      audit,
    );
    return { ...writtenRow(row, `API key ${key.id}`) };
  }
  async revokeApiKey(id: string, at: number, audit?: AuditEntry) {
    const current = this.apiKey(id);
    if (current?.revokedAt != null) return { ...current };
    // Revoked once: a second revocation (here or on another instance) keeps the first time, and
    // writes no entry; the key is then read as it is.
    const row = await this.write(
      "api_key",
      id,
      async (tx) =>
        (
          await tx
            .update(apiKeys)
            .set({ revokedAt: at })
            .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
            .returning()
        )[0],
      (r) => this.cacheKey(r),
      audit,
    );
    if (row) return { ...row };
    const [stored] = await this.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    return stored && { ...stored };
  }

  async createWaba(waba: Waba, audit?: AuditEntry) {
    const row = await this.write(
      "waba",
      waba.wabaId,
      async (tx) => (await tx.insert(wabas).values(sealWaba(waba, this.sealer)).onConflictDoNothing().returning())[0],
      (r) => this.cacheWaba(this.toWaba(r)),
      audit,
    );
    return row ? { ...waba } : null;
  }
  async updateWaba(wabaId: string, patch: WabaPatch, audit?: AuditEntry) {
    const set: Partial<typeof wabas.$inferInsert> = { updatedAt: patch.updatedAt };
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.accessToken !== undefined) set.accessTokenEnc = this.sealer.seal(patch.accessToken);
    if (patch.appSecret !== undefined)
      set.appSecretEnc = patch.appSecret === null ? null : this.sealer.seal(patch.appSecret);
    Object.assign(
      set,
      defined({
        causeCode: patch.causeCode,
        causeMessage: patch.causeMessage,
        causeAt: patch.causeAt,
        causeRequestId: patch.causeRequestId,
      }),
    );
    const row = await this.write(
      "waba",
      wabaId,
      async (tx) => (await tx.update(wabas).set(set).where(eq(wabas.wabaId, wabaId)).returning())[0],
      (r) => this.cacheWaba(this.toWaba(r)),
      audit,
    );
    return row && this.toWaba(row);
  }

  async createNumber(number: PhoneNumber, audit?: AuditEntry) {
    const row = await this.write(
      "number",
      number.phoneNumberId,
      async (tx) => (await tx.insert(numbers).values(number).onConflictDoNothing().returning())[0],
      (r) => this.cacheNumber(r),
      audit,
    );
    return row ? { ...row } : null;
  }
  async updateNumber(phoneNumberId: string, given: NumberPatch, audit?: AuditEntry) {
    const patch = defined(given);
    const row = await this.write(
      "number",
      phoneNumberId,
      async (tx) =>
        (await tx.update(numbers).set(patch).where(eq(numbers.phoneNumberId, phoneNumberId)).returning())[0],
      (r) => this.cacheNumber(r),
      audit,
    );
    return row && { ...row };
  }

  async connect(waba: Waba, number: PhoneNumber, audit?: AuditEntry): Promise<Connected> {
    let written: { wabaRow: typeof wabas.$inferSelect; numberRow: PhoneNumber; created: boolean };
    try {
      written = await transaction(this.db, async (tx) => {
        // Absent rows are inserted first, so that the check reads, locked, whichever row won.
        await tx.orm.insert(wabas).values(sealWaba(waba, this.sealer)).onConflictDoNothing();
        const created =
          (await tx.orm.insert(numbers).values(number).onConflictDoNothing().returning({ id: numbers.phoneNumberId }))
            .length > 0;
        const [locked] = await tx.orm.select().from(wabas).where(eq(wabas.wabaId, waba.wabaId)).for("update");
        const [lockedNumber] = await tx.orm
          .select()
          .from(numbers)
          .where(eq(numbers.phoneNumberId, number.phoneNumberId))
          .for("update");
        const stored = writtenRow(locked, `WABA ${waba.wabaId}`);
        const numberRow = writtenRow(lockedNumber, `number ${number.phoneNumberId}`);
        const refused = connectRefusal(waba.accountId, waba.wabaId, waba.appSecret !== null, {
          waba: { accountId: stored.accountId, byo: stored.appSecretEnc !== null },
          number: numberRow,
        });
        if (refused) throw new NotConnected(refused);
        const [updated] = await tx.orm
          .update(wabas)
          .set(reconnectedWaba(waba, this.sealer))
          .where(eq(wabas.wabaId, waba.wabaId))
          .returning();
        await this.feed.record(tx, "waba", [waba.wabaId]);
        if (created) await this.feed.record(tx, "number", [number.phoneNumberId]);
        await recordAudit(tx.raw, audit);
        return { wabaRow: writtenRow(updated, `WABA ${waba.wabaId}`), numberRow, created };
      });
    } catch (error) {
      if (error instanceof NotConnected) return { refused: error.refusal };
      throw error;
    }
    await this.feed.serially(() => {
      this.cacheWaba(this.toWaba(written.wabaRow));
      this.cacheNumber(written.numberRow);
    });
    return { waba: this.toWaba(written.wabaRow), number: { ...written.numberRow }, created: written.created };
  }
}

/** connect's refusal, thrown inside its transaction to roll back what it inserted. */
class NotConnected extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal);
  }
}
