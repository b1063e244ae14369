import type { Account, ApiKey, PhoneNumber, Waba } from "./types.ts";

/** Appends to a map of arrays. */
function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function remove<T>(map: Map<string, T[]>, key: string, match: (v: T) => boolean): void {
  const list = map.get(key);
  if (!list) return;
  const i = list.findIndex(match);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) map.delete(key);
}

/** Drops keys whose value is undefined, so a patch never blanks a field it did not name. */
export function defined<T extends object>(patch: T): T {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The directory's in-memory view (accounts, API keys, WABAs, numbers), indexed as the proxy reads
 * it: every read is a map look-up. A backend's Directory extends it and keeps it equal to its
 * database (write-through, and reloads when others changed it).
 */
export abstract class CachedDirectory {
  private readonly accountsById = new Map<string, Account>();
  private readonly keysById = new Map<string, ApiKey>();
  private readonly keysByHash = new Map<string, ApiKey>();
  private readonly keysByAccount = new Map<string, ApiKey[]>();
  private readonly wabasById = new Map<string, Waba>();
  private readonly wabasByAccount = new Map<string, Waba[]>();
  private readonly numbersById = new Map<string, PhoneNumber>();
  private readonly numbersByAccount = new Map<string, PhoneNumber[]>();
  private readonly numbersByWaba = new Map<string, PhoneNumber[]>();

  protected clearCache(): void {
    for (const map of [
      this.accountsById,
      this.keysById,
      this.keysByHash,
      this.keysByAccount,
      this.wabasById,
      this.wabasByAccount,
      this.numbersById,
      this.numbersByAccount,
      this.numbersByWaba,
    ])
      map.clear();
  }

  protected cacheAccount(account: Account): void {
    this.accountsById.set(account.id, account);
  }

  protected cacheKey(key: ApiKey): void {
    this.forgetKey(key.id);
    this.keysById.set(key.id, key);
    this.keysByHash.set(key.keyHash, key);
    push(this.keysByAccount, key.accountId, key);
  }

  protected forgetKey(id: string): void {
    const old = this.keysById.get(id);
    if (!old) return;
    this.keysById.delete(id);
    this.keysByHash.delete(old.keyHash);
    remove(this.keysByAccount, old.accountId, (k) => k.id === id);
  }

  protected cacheWaba(waba: Waba): void {
    this.forgetWaba(waba.wabaId);
    this.wabasById.set(waba.wabaId, waba);
    push(this.wabasByAccount, waba.accountId, waba);
  }

  protected forgetWaba(wabaId: string): void {
    const old = this.wabasById.get(wabaId);
    if (!old) return;
    this.wabasById.delete(wabaId);
    remove(this.wabasByAccount, old.accountId, (w) => w.wabaId === wabaId);
  }

  protected cacheNumber(number: PhoneNumber): void {
    this.forgetNumber(number.phoneNumberId);
    this.numbersById.set(number.phoneNumberId, number);
    push(this.numbersByAccount, number.accountId, number);
    push(this.numbersByWaba, number.wabaId, number);
  }

  protected forgetNumber(phoneNumberId: string): void {
    const old = this.numbersById.get(phoneNumberId);
    if (!old) return;
    this.numbersById.delete(phoneNumberId);
    remove(this.numbersByAccount, old.accountId, (n) => n.phoneNumberId === phoneNumberId);
    remove(this.numbersByWaba, old.wabaId, (n) => n.phoneNumberId === phoneNumberId);
  }

  protected forgetAccount(id: string): void {
    this.accountsById.delete(id);
  }

  account(id: string) {
    return this.accountsById.get(id);
  }
  accounts() {
    return [...this.accountsById.values()];
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
  waba(wabaId: string) {
    return this.wabasById.get(wabaId);
  }
  wabas(accountId: string) {
    return [...(this.wabasByAccount.get(accountId) ?? [])];
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
}
