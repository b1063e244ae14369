import { eq } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import { CachedDirectory, defined } from "../cached-directory.ts";
import { connectRefusal, type Connected, type Refusal } from "../ownership.ts";
import { openWaba, reconnectedWaba, sealWaba } from "../sealed-rows.ts";
import type { AuditEntry } from "../audit.ts";
import { EmailTaken, writtenRow } from "../errors.ts";
import type { Directory, NumberPatch, WabaPatch } from "../store.ts";
import {
  userRow,
  type Account,
  type ApiKey,
  type NewUser,
  type PhoneNumber,
  type StatusCause,
  type Waba,
} from "../types.ts";
import type { AuditWriter } from "./audit.ts";
import { oneRow } from "./one-row.ts";
import type { Db } from "./open.ts";
import { accounts, apiKeys, numbers, users, wabas } from "./schema.ts";

/**
 * Loads the whole directory at start (it is small: accounts, keys, WABAs, numbers) and keeps it in
 * memory. Each write goes to SQLite first and then replaces the cached record, so readers see a
 * change as soon as the write returns and never a record the database does not have.
 */
export class SqliteDirectory extends CachedDirectory implements Directory {
  /** SQLite's data_version changes only when another connection commits: the CLI beside a running server. */
  private seenVersion = -1;

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly audit: AuditWriter,
  ) {
    super();
    this.load();
  }

  private dataVersion(): number {
    return oneRow<{ data_version: number }>(this.db.$client, "PRAGMA data_version").data_version;
  }

  private load(): void {
    this.clearCache();
    this.seenVersion = this.dataVersion();
    for (const row of this.db.select().from(accounts).all()) this.cacheAccount(row);
    for (const row of this.db.select().from(apiKeys).all()) this.cacheKey(row);
    for (const row of this.db.select().from(wabas).all()) this.cacheWaba(this.toWaba(row));
    for (const row of this.db.select().from(numbers).all()) this.cacheNumber(row);
  }

  async refresh(): Promise<boolean> {
    if (this.dataVersion() === this.seenVersion) return false;
    // Reloading everything is simpler than diffing and cheap: the directory is small.
    this.load();
    return true;
  }

  private toWaba(row: typeof wabas.$inferSelect): Waba {
    return openWaba(row, this.sealer);
  }

  async createAccount(account: Account, audit?: AuditEntry) {
    this.audit.audited(audit, () => this.db.insert(accounts).values(account).run());
    this.cacheAccount({ ...account });
    return { ...account };
  }
  async createAccountWithUser(account: Account, user: NewUser, audit?: { account: AuditEntry; user: AuditEntry }) {
    const created = this.db.$client.transaction(() => {
      this.db.insert(accounts).values(account).run();
      // The email taken: throwing rolls the account back with the transaction.
      if (!this.db.insert(users).values(userRow(user)).onConflictDoNothing().returning().get()) throw new EmailTaken();
      this.audit.record(audit?.account);
      this.audit.record(audit?.user);
    });
    try {
      created();
    } catch (error) {
      if (error instanceof EmailTaken) return null;
      throw error;
    }
    this.cacheAccount({ ...account });
    return { ...account };
  }
  async updateAccount(id: string, given: Partial<Omit<Account, "id" | "createdAt">>, audit?: AuditEntry) {
    const patch = defined(given);
    const current = this.account(id);
    if (!current) return undefined;
    const next = { ...current, ...patch };
    this.audit.audited(audit, () => {
      if (Object.keys(patch).length > 0) this.db.update(accounts).set(patch).where(eq(accounts.id, id)).run();
    });
    this.cacheAccount(next);
    return { ...next };
  }

  async createApiKey(key: ApiKey, audit?: AuditEntry) {
    this.audit.audited(audit, () => this.db.insert(apiKeys).values(key).run());
    this.cacheKey({ ...key });
    return { ...key };
  }
  async revokeApiKey(id: string, at: number, audit?: AuditEntry) {
    const current = this.apiKey(id);
    if (!current) return undefined;
    if (current.revokedAt !== null) return { ...current };
    this.audit.audited(audit, () => this.db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id)).run());
    const next = { ...current, revokedAt: at };
    this.cacheKey(next);
    return { ...next };
  }

  async createWaba(waba: Waba, audit?: AuditEntry) {
    const inserted = this.audit.audited(
      audit,
      () => this.db.insert(wabas).values(sealWaba(waba, this.sealer)).onConflictDoNothing().returning().all(),
      (rows) => rows.length > 0,
    );
    if (inserted.length === 0) return null;
    this.cacheWaba({ ...waba });
    return { ...waba };
  }
  async updateWaba(wabaId: string, patch: WabaPatch, audit?: AuditEntry) {
    const current = this.waba(wabaId);
    if (!current) return undefined;
    const row: Partial<typeof wabas.$inferInsert> = { updatedAt: patch.updatedAt };
    if (patch.status !== undefined) row.status = patch.status;
    if (patch.accessToken !== undefined) row.accessTokenEnc = this.sealer.seal(patch.accessToken);
    if (patch.appSecret !== undefined)
      row.appSecretEnc = patch.appSecret === null ? null : this.sealer.seal(patch.appSecret);
    const cause: Partial<StatusCause> = defined({
      causeCode: patch.causeCode,
      causeMessage: patch.causeMessage,
      causeAt: patch.causeAt,
      causeRequestId: patch.causeRequestId,
    });
    this.audit.audited(audit, () =>
      this.db
        .update(wabas)
        .set({ ...row, ...cause })
        .where(eq(wabas.wabaId, wabaId))
        .run(),
    );
    const next: Waba = {
      ...current,
      ...cause,
      status: patch.status ?? current.status,
      accessToken: patch.accessToken ?? current.accessToken,
      appSecret: patch.appSecret === undefined ? current.appSecret : patch.appSecret,
      updatedAt: patch.updatedAt,
    };
    this.cacheWaba(next);
    return { ...next };
  }

  async createNumber(number: PhoneNumber, audit?: AuditEntry) {
    const inserted = this.audit.audited(
      audit,
      () => this.db.insert(numbers).values(number).onConflictDoNothing().returning().all(),
      (rows) => rows.length > 0,
    );
    if (inserted.length === 0) return null;
    this.cacheNumber({ ...number });
    return { ...number };
  }
  async updateNumber(phoneNumberId: string, given: NumberPatch, audit?: AuditEntry) {
    const patch = defined(given);
    const current = this.number(phoneNumberId);
    if (!current) return undefined;
    this.audit.audited(audit, () =>
      this.db.update(numbers).set(patch).where(eq(numbers.phoneNumberId, phoneNumberId)).run(),
    );
    const next = { ...current, ...patch };
    this.cacheNumber(next);
    return { ...next };
  }

  // Immediate: the write lock is taken before the reads, so another process (the CLI) cannot
  // change the rows between the check and the write.
  async connect(waba: Waba, number: PhoneNumber, audit?: AuditEntry): Promise<Connected> {
    const written = this.db.transaction(
      (tx): { refused: Refusal } | { wabaRow: typeof wabas.$inferSelect; numberRow: PhoneNumber; created: boolean } => {
        const stored = tx.select().from(wabas).where(eq(wabas.wabaId, waba.wabaId)).get();
        const storedNumber = tx.select().from(numbers).where(eq(numbers.phoneNumberId, number.phoneNumberId)).get();
        const refused = connectRefusal(waba.accountId, waba.wabaId, waba.appSecret !== null, {
          waba: stored && { accountId: stored.accountId, byo: stored.appSecretEnc !== null },
          number: storedNumber,
        });
        if (refused) return { refused };
        if (stored) tx.update(wabas).set(reconnectedWaba(waba, this.sealer)).where(eq(wabas.wabaId, waba.wabaId)).run();
        else tx.insert(wabas).values(sealWaba(waba, this.sealer)).run();
        if (!storedNumber) tx.insert(numbers).values(number).run();
        this.audit.record(audit);
        return {
          wabaRow: writtenRow(
            tx.select().from(wabas).where(eq(wabas.wabaId, waba.wabaId)).get(),
            `WABA ${waba.wabaId}`,
          ),
          numberRow: storedNumber ?? number,
          created: !storedNumber,
        };
      },
      { behavior: "immediate" },
    );
    if ("refused" in written) return written;
    this.cacheWaba(this.toWaba(written.wabaRow));
    this.cacheNumber({ ...written.numberRow });
    return { waba: this.toWaba(written.wabaRow), number: { ...written.numberRow }, created: written.created };
  }
}
