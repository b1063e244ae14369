import { eq } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import type { Directory } from "../store.ts";
import type { Account, ApiKey, PhoneNumber, Waba } from "../types.ts";
import type { Db } from "./open.ts";
import { accounts, apiKeys, numbers, wabas } from "./schema.ts";

/** Appends to a map of arrays. */
function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Drops keys whose value is undefined, so a patch never blanks a field it did not name. */
function defined<T extends object>(patch: T): T {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as T;
}

function remove<T>(map: Map<string, T[]>, key: string, match: (v: T) => boolean): void {
  const list = map.get(key);
  if (!list) return;
  const i = list.findIndex(match);
  if (i >= 0) list.splice(i, 1);
}

/**
 * Loads the whole directory at start (it is small: accounts, keys, WABAs, numbers) and keeps it in
 * memory. Each write goes to SQLite first and then replaces the cached record, so readers see a
 * change as soon as the write returns and never a record the database does not have.
 */
export class SqliteDirectory implements Directory {
  private readonly accountsById = new Map<string, Account>();
  private readonly keysById = new Map<string, ApiKey>();
  private readonly keysByHash = new Map<string, ApiKey>();
  private readonly keysByAccount = new Map<string, ApiKey[]>();
  private readonly wabasById = new Map<string, Waba>();
  private readonly wabasByAccount = new Map<string, Waba[]>();
  private readonly numbersById = new Map<string, PhoneNumber>();
  private readonly numbersByAccount = new Map<string, PhoneNumber[]>();
  private readonly numbersByWaba = new Map<string, PhoneNumber[]>();

  /** SQLite's data_version changes only when another connection commits: the CLI beside a running server. */
  private seenVersion = -1;

  constructor(private readonly db: Db, private readonly sealer: Sealer) {
    this.load();
  }

  private dataVersion(): number {
    return this.db.$client.query<{ data_version: number }, []>("PRAGMA data_version").get()!.data_version;
  }

  private load(): void {
    for (const map of [this.accountsById, this.keysById, this.keysByHash, this.keysByAccount, this.wabasById,
      this.wabasByAccount, this.numbersById, this.numbersByAccount, this.numbersByWaba]) map.clear();
    this.seenVersion = this.dataVersion();
    for (const row of this.db.select().from(accounts).all()) this.accountsById.set(row.id, row);
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
    return {
      wabaId: row.wabaId,
      accountId: row.accountId,
      accessToken: this.sealer.open(row.accessTokenEnc),
      appSecret: row.appSecretEnc === null ? null : this.sealer.open(row.appSecretEnc),
      status: row.status,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  private cacheKey(key: ApiKey): void {
    this.keysById.set(key.id, key);
    this.keysByHash.set(key.keyHash, key);
    remove(this.keysByAccount, key.accountId, (k) => k.id === key.id);
    push(this.keysByAccount, key.accountId, key);
  }

  private cacheWaba(waba: Waba): void {
    this.wabasById.set(waba.wabaId, waba);
    remove(this.wabasByAccount, waba.accountId, (w) => w.wabaId === waba.wabaId);
    push(this.wabasByAccount, waba.accountId, waba);
  }

  private cacheNumber(number: PhoneNumber): void {
    this.numbersById.set(number.phoneNumberId, number);
    remove(this.numbersByAccount, number.accountId, (n) => n.phoneNumberId === number.phoneNumberId);
    push(this.numbersByAccount, number.accountId, number);
    remove(this.numbersByWaba, number.wabaId, (n) => n.phoneNumberId === number.phoneNumberId);
    push(this.numbersByWaba, number.wabaId, number);
  }

  account(id: string) {
    return this.accountsById.get(id);
  }
  accounts() {
    return [...this.accountsById.values()];
  }
  async createAccount(account: Account) {
    this.db.insert(accounts).values(account).run();
    this.accountsById.set(account.id, { ...account });
    return { ...account };
  }
  async updateAccount(id: string, given: Partial<Omit<Account, "id" | "createdAt">>) {
    const patch = defined(given);
    const current = this.accountsById.get(id);
    if (!current) return undefined;
    const next = { ...current, ...patch };
    this.db.update(accounts).set(patch).where(eq(accounts.id, id)).run();
    this.accountsById.set(id, next);
    return { ...next };
  }

  apiKeyByHash(keyHash: string) {
    return this.keysByHash.get(keyHash);
  }
  apiKey(id: string) {
    return this.keysById.get(id);
  }
  apiKeys(accountId: string) {
    return [...(this.keysByAccount.get(accountId) ?? [])];
  }
  async createApiKey(key: ApiKey) {
    this.db.insert(apiKeys).values(key).run();
    this.cacheKey({ ...key });
    return { ...key };
  }
  async revokeApiKey(id: string, at: number) {
    const current = this.keysById.get(id);
    if (!current) return undefined;
    if (current.revokedAt !== null) return { ...current };
    this.db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id)).run();
    const next = { ...current, revokedAt: at };
    this.cacheKey(next);
    return { ...next };
  }

  waba(wabaId: string) {
    return this.wabasById.get(wabaId);
  }
  wabas(accountId: string) {
    return [...(this.wabasByAccount.get(accountId) ?? [])];
  }
  async createWaba(waba: Waba) {
    this.db
      .insert(wabas)
      .values({
        wabaId: waba.wabaId,
        accountId: waba.accountId,
        accessTokenEnc: this.sealer.seal(waba.accessToken),
        appSecretEnc: waba.appSecret === null ? null : this.sealer.seal(waba.appSecret),
        status: waba.status,
        createdAt: waba.createdAt,
        updatedAt: waba.updatedAt,
      })
      .run();
    this.cacheWaba({ ...waba });
    return { ...waba };
  }
  async updateWaba(wabaId: string, patch: { status?: Waba["status"]; accessToken?: string; appSecret?: string | null; updatedAt: number }) {
    const current = this.wabasById.get(wabaId);
    if (!current) return undefined;
    const row: Partial<typeof wabas.$inferInsert> = { updatedAt: patch.updatedAt };
    if (patch.status !== undefined) row.status = patch.status;
    if (patch.accessToken !== undefined) row.accessTokenEnc = this.sealer.seal(patch.accessToken);
    if (patch.appSecret !== undefined) row.appSecretEnc = patch.appSecret === null ? null : this.sealer.seal(patch.appSecret);
    this.db.update(wabas).set(row).where(eq(wabas.wabaId, wabaId)).run();
    const next: Waba = {
      ...current,
      status: patch.status ?? current.status,
      accessToken: patch.accessToken ?? current.accessToken,
      appSecret: patch.appSecret === undefined ? current.appSecret : patch.appSecret,
      updatedAt: patch.updatedAt,
    };
    this.cacheWaba(next);
    return { ...next };
  }

  number(phoneNumberId: string) {
    return this.numbersById.get(phoneNumberId);
  }
  numbers(accountId: string) {
    return [...(this.numbersByAccount.get(accountId) ?? [])];
  }
  numbersOfWaba(wabaId: string) {
    return [...(this.numbersByWaba.get(wabaId) ?? [])];
  }
  async createNumber(number: PhoneNumber) {
    this.db.insert(numbers).values(number).run();
    this.cacheNumber({ ...number });
    return { ...number };
  }
  async updateNumber(
    phoneNumberId: string,
    given: Partial<Omit<PhoneNumber, "phoneNumberId" | "accountId" | "wabaId" | "createdAt">> & { updatedAt: number },
  ) {
    const patch = defined(given);
    const current = this.numbersById.get(phoneNumberId);
    if (!current) return undefined;
    this.db.update(numbers).set(patch).where(eq(numbers.phoneNumberId, phoneNumberId)).run();
    const next = { ...current, ...patch };
    this.cacheNumber(next);
    return { ...next };
  }
}
