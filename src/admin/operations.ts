import { changesOf } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { displayPrefix, generateApiKey, hashApiKey } from "../crypto/api-key.ts";
import { AppError } from "../errors/catalog.ts";
import { causeOf, effectOfFault, logEffect } from "../numbers/state-change.ts";
import { fetchNumberDetails, type SyncResult } from "../numbers/sync.ts";
import type { Deps } from "../runtime/deps.ts";
import { randomId } from "../runtime/random.ts";
import type { AuditAction } from "../store/audit.ts";
import type { NumberPatch, WabaPatch } from "../store/store.ts";
import { NO_CAUSE, type Account, type ApiKey, type PhoneNumber, type User, type Waba } from "../store/types.ts";
import type {
  CreateAccountInput,
  CreateApiKeyInput,
  CreateNumberInput,
  CreateUserInput,
  CreateWabaInput,
  UpdateAccountInput,
  UpdateNumberInput,
  UpdateWabaInput,
} from "./schemas.ts";

/**
 * The operator's operations (CONTRACT 3) as plain functions: the HTTP routes and the CLI both call
 * these, so the two can never disagree. Each change is made by someone (`by`), and the store
 * writes its audit entry with it.
 */
type OpDeps = Pick<Deps, "store" | "clock" | "random" | "config" | "fetch" | "logger">;

export function getAccount(deps: Pick<OpDeps, "store">, id: string): Account {
  const account = deps.store.directory.account(id);
  if (!account) throw new AppError("not_found", `No account ${id}.`);
  return account;
}

export async function createAccount(deps: OpDeps, input: CreateAccountInput, by: AuditContext): Promise<Account> {
  const account: Account = {
    id: randomId(deps.random, "acc"),
    name: input.name,
    email: input.email,
    billingStatus: input.billing_status ?? "active",
    retention: input.retention ?? "24h",
    maxNumbers: input.max_numbers ?? null,
    createdAt: deps.clock.now(),
  };
  const object = { kind: "account", id: account.id };
  return deps.store.directory.createAccount(
    account,
    auditEntry(deps, by, "account.create", object, account.id, changesOf(null, account)),
  );
}

/** Changes an account; `account.update` by the operator, `settings.update` by the account itself. */
export async function updateAccount(
  deps: OpDeps,
  id: string,
  input: UpdateAccountInput,
  by: AuditContext,
  action: Extract<AuditAction, "account.update" | "settings.update"> = "account.update",
): Promise<Account> {
  const account = getAccount(deps, id);
  const patch: Partial<Account> = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.email !== undefined) patch.email = input.email;
  if (input.billing_status !== undefined) patch.billingStatus = input.billing_status;
  if (input.retention !== undefined) patch.retention = input.retention;
  if (input.max_numbers !== undefined) patch.maxNumbers = input.max_numbers;
  const entry = auditEntry(deps, by, action, { kind: "account", id }, id, changesOf(account, patch));
  return found(await deps.store.directory.updateAccount(id, patch, entry), `No account ${id}.`);
}

export async function createUser(
  deps: OpDeps,
  accountId: string,
  input: CreateUserInput,
  by: AuditContext,
): Promise<User> {
  getAccount(deps, accountId);
  const taken = () => new AppError("conflict", `A dashboard user with email ${input.email} already exists.`);
  // Checked first to spare the hash; the insert decides when two requests create the same email at once.
  if (await deps.store.users.byEmail(input.email)) throw taken();
  const id = randomId(deps.random, "usr");
  const entry = auditEntry(deps, by, "user.create", { kind: "user", id }, accountId, {
    email: [null, input.email.toLowerCase()],
  });
  const user = await deps.store.users.create(
    {
      id,
      accountId,
      email: input.email,
      passwordHash: await Bun.password.hash(input.password, { algorithm: "argon2id" }),
      createdAt: deps.clock.now(),
    },
    entry,
  );
  if (!user) throw taken();
  return user;
}

/** Creates a key; the plain key is returned only here and never stored. */
export async function createApiKey(
  deps: OpDeps,
  accountId: string,
  input: CreateApiKeyInput,
  by: AuditContext,
): Promise<{ key: string; record: ApiKey }> {
  getAccount(deps, accountId);
  const key = generateApiKey(deps.random, input.mode);
  const record: ApiKey = {
    id: randomId(deps.random, "key"),
    accountId,
    mode: input.mode,
    name: input.name ?? null,
    prefix: displayPrefix(key),
    keyHash: hashApiKey(key),
    createdAt: deps.clock.now(),
    revokedAt: null,
  };
  const { keyHash: _, ...shown } = record;
  const entry = auditEntry(
    deps,
    by,
    "api_key.create",
    { kind: "api_key", id: record.id },
    accountId,
    changesOf(null, shown),
  );
  return { key, record: await deps.store.directory.createApiKey(record, entry) };
}

/** Revokes a key; `accountId` scopes the look-up for the dashboard, where other accounts' keys are 404. */
export async function revokeApiKey(deps: OpDeps, id: string, by: AuditContext, accountId?: string): Promise<ApiKey> {
  const key = deps.store.directory.apiKey(id);
  if (!key || (accountId !== undefined && key.accountId !== accountId))
    throw new AppError("not_found", `No API key ${id}.`);
  const now = deps.clock.now();
  const object = { kind: "api_key", id };
  const entry = auditEntry(deps, by, "api_key.revoke", object, key.accountId, changesOf(key, { revokedAt: now }));
  return found(await deps.store.directory.revokeApiKey(id, now, entry), `No API key ${id}.`);
}

export function getWaba(deps: OpDeps, wabaId: string): Waba {
  const waba = deps.store.directory.waba(wabaId);
  if (!waba) throw new AppError("not_found", `No WABA ${wabaId}.`);
  return waba;
}

export async function createWaba(
  deps: OpDeps,
  accountId: string,
  input: CreateWabaInput,
  by: AuditContext,
): Promise<Waba> {
  getAccount(deps, accountId);
  const taken = () => new AppError("conflict", `WABA ${input.waba_id} is already connected.`);
  if (deps.store.directory.waba(input.waba_id)) throw taken();
  const now = deps.clock.now();
  const waba: Waba = {
    ...NO_CAUSE,
    wabaId: input.waba_id,
    accountId,
    accessToken: input.access_token,
    appSecret: input.app_secret ?? null,
    status: "connected",
    createdAt: now,
    updatedAt: now,
  };
  const object = { kind: "waba", id: waba.wabaId };
  const entry = auditEntry(deps, by, "waba.create", object, accountId, changesOf(null, waba));
  // The insert decides when two requests connect the same WABA at once.
  const created = await deps.store.directory.createWaba(waba, entry);
  if (!created) throw taken();
  return created;
}

export async function updateWaba(
  deps: OpDeps,
  wabaId: string,
  input: UpdateWabaInput,
  by: AuditContext,
): Promise<Waba> {
  const patch: WabaPatch = {
    status: input.status,
    // A state set by hand has no upstream cause; a new token alone leaves the state as it is.
    ...(input.status !== undefined ? NO_CAUSE : {}),
    accessToken: input.access_token,
    updatedAt: deps.clock.now(),
  };
  return changeWaba(deps, getWaba(deps, wabaId), patch, by);
}

/** A change of a WABA, recorded as `waba.update` when `by` is given. */
async function changeWaba(deps: OpDeps, waba: Waba, patch: WabaPatch, by: AuditContext | undefined): Promise<Waba> {
  const object = { kind: "waba", id: waba.wabaId };
  const entry = by && auditEntry(deps, by, "waba.update", object, waba.accountId, changesOf(waba, patch));
  return found(await deps.store.directory.updateWaba(waba.wabaId, patch, entry), `No WABA ${waba.wabaId}.`);
}

/** A record a write returned, or 404 when it went meanwhile (deleted by another request). */
function found<T>(record: T | undefined, message: string): T {
  if (record === undefined) throw new AppError("not_found", message);
  return record;
}

export function getNumber(deps: OpDeps, phoneNumberId: string): PhoneNumber {
  const number = deps.store.directory.number(phoneNumberId);
  if (!number) throw new AppError("not_found", `No number ${phoneNumberId}.`);
  return number;
}

/**
 * Re-reads a number's details from upstream; on failure the number keeps its level and records
 * why. `check`: the read is also a check of its condition ("Check again", see applySync).
 */
export async function syncNumber(deps: OpDeps, phoneNumberId: string, options: SyncOptions = {}): Promise<PhoneNumber> {
  const number = getNumber(deps, phoneNumberId);
  return applySync(deps, phoneNumberId, await fetchNumberDetails(deps, number, getWaba(deps, number.wabaId)), options);
}

/** `check`: the read checks the number's condition; `by`: who asked, recorded as `number.sync` (and `waba.update`). */
export interface SyncOptions {
  check?: boolean;
  by?: AuditContext;
}

/**
 * Stores what a read of the number's details from upstream gave: its details, or why it failed.
 * With `check` (someone asked to check the number again) the read is also a check of its
 * condition (SPEC 3.3), made with the WABA's token: an upstream error that sets a state sets it
 * here too, with its cause (no request id: no proxied call got it); a good read shows the token
 * works and the platform serves the number again, so a revoked token's WABA and a restricted,
 * flagged or unregistered number are connected again. The read when a number is first connected
 * is not such a check: it only fills in the details. The number is written once, with its entry
 * when `by` is given; a WABA it changes, with its own.
 */
export async function applySync(
  deps: OpDeps,
  phoneNumberId: string,
  result: SyncResult,
  { check = false, by }: SyncOptions = {},
): Promise<PhoneNumber> {
  const now = deps.clock.now();
  const number = getNumber(deps, phoneNumberId);
  const waba = deps.store.directory.waba(number.wabaId);
  const patch: NumberPatch = { updatedAt: now };
  if (!result.ok) {
    deps.logger.warn("number sync failed", { phone_number_id: phoneNumberId, reason: result.reason });
    patch.syncError = result.reason;
    const effect =
      check && result.fault
        ? effectOfFault(result.fault, { idKind: "number", wabaId: number.wabaId, phoneNumberId })
        : null;
    if (effect) {
      logEffect(deps.logger, effect, null);
      const cause = causeOf(effect.fault, now, null);
      if (!("waba" in effect)) Object.assign(patch, { status: effect.status, ...cause });
      else if (waba) await changeWaba(deps, waba, { status: "token_revoked", ...cause, updatedAt: now }, by);
    }
  } else {
    Object.assign(patch, result.details, { syncedAt: now, syncError: null });
    if (check && waba?.status === "token_revoked")
      await changeWaba(deps, waba, { status: "connected", ...NO_CAUSE, updatedAt: now }, by);
    if (check && UPSTREAM_SET.has(number.status)) Object.assign(patch, { status: "connected", ...NO_CAUSE });
  }
  const object = { kind: "number", id: phoneNumberId };
  const entry = by && auditEntry(deps, by, "number.sync", object, number.accountId, changesOf(number, patch));
  return found(await deps.store.directory.updateNumber(phoneNumberId, patch, entry), `No number ${phoneNumberId}.`);
}

/** The number states only upstream sets (SPEC 3.3), which a good read of the number ends. */
const UPSTREAM_SET = new Set<PhoneNumber["status"]>(["restricted", "flagged", "not_registered"]);

/** 409 plan_limit when the account already uses every number its plan allows (disconnected ones do not count). */
export function assertPlanRoom(deps: OpDeps, account: Account): void {
  const connected = deps.store.directory.numbers(account.id).filter((n) => n.status !== "disconnected").length;
  if (account.maxNumbers !== null && connected >= account.maxNumbers) {
    throw new AppError("plan_limit", `The account's plan allows ${account.maxNumbers} number(s).`);
  }
}

/**
 * Connects a number and reads its details from upstream, unless the caller has just read them
 * (`details`), so upstream is asked once.
 */
export async function createNumber(
  deps: OpDeps,
  accountId: string,
  input: CreateNumberInput,
  by: AuditContext,
  details?: SyncResult,
): Promise<PhoneNumber> {
  const account = getAccount(deps, accountId);
  const waba = deps.store.directory.waba(input.waba_id);
  if (!waba || waba.accountId !== accountId) {
    throw new AppError(
      "invalid_request",
      `WABA ${input.waba_id} is not connected to account ${accountId}; add it first.`,
    );
  }
  const taken = () => new AppError("conflict", `Number ${input.phone_number_id} is already connected.`);
  if (deps.store.directory.number(input.phone_number_id)) throw taken();
  assertPlanRoom(deps, account);
  const number = newNumber(accountId, input, deps.clock.now());
  const object = { kind: "number", id: number.phoneNumberId };
  const entry = auditEntry(deps, by, "number.create", object, accountId, changesOf(null, number));
  // The insert decides when two requests connect the same number at once.
  if (!(await deps.store.directory.createNumber(number, entry))) throw taken();
  // Its details are part of connecting it: read now, with no entry of their own.
  return details ? applySync(deps, input.phone_number_id, details) : syncNumber(deps, input.phone_number_id);
}

/** A number as first stored: connected, at the standard level until its details are read. */
export function newNumber(accountId: string, input: CreateNumberInput, now: number): PhoneNumber {
  return {
    ...NO_CAUSE,
    phoneNumberId: input.phone_number_id,
    accountId,
    wabaId: input.waba_id,
    kind: input.kind,
    status: "connected",
    throughputLevel: "STANDARD",
    displayPhoneNumber: null,
    verifiedName: null,
    syncedAt: null,
    syncError: null,
    createdAt: now,
    updatedAt: now,
  };
}

export async function updateNumber(
  deps: OpDeps,
  phoneNumberId: string,
  input: UpdateNumberInput,
  by: AuditContext,
): Promise<PhoneNumber> {
  const number = getNumber(deps, phoneNumberId);
  const patch: NumberPatch = {
    status: input.status,
    ...(input.status !== undefined ? NO_CAUSE : {}),
    updatedAt: deps.clock.now(),
  };
  const object = { kind: "number", id: phoneNumberId };
  const entry = auditEntry(deps, by, "number.update", object, number.accountId, changesOf(number, patch));
  return found(await deps.store.directory.updateNumber(phoneNumberId, patch, entry), `No number ${phoneNumberId}.`);
}
