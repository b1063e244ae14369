import { displayPrefix, generateApiKey, hashApiKey } from "../crypto/api-key.ts";
import { AppError } from "../errors/catalog.ts";
import { orNotFound } from "../errors/not-found.ts";
import { applyEffect, effectOfFault } from "../numbers/state-change.ts";
import { fetchNumberDetails, type SyncResult } from "../numbers/sync.ts";
import type { Deps } from "../runtime/deps.ts";
import { randomId } from "../runtime/random.ts";
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
 * these, so the two can never disagree.
 */
type OpDeps = Pick<Deps, "store" | "clock" | "random" | "config" | "fetch" | "logger">;

export function getAccount(deps: Pick<OpDeps, "store">, id: string): Account {
  const account = deps.store.directory.account(id);
  if (!account) throw new AppError("not_found", `No account ${id}.`);
  return account;
}

export async function createAccount(deps: OpDeps, input: CreateAccountInput): Promise<Account> {
  return deps.store.directory.createAccount({
    id: randomId(deps.random, "acc"),
    name: input.name,
    email: input.email,
    billingStatus: input.billing_status ?? "active",
    retention: input.retention ?? "24h",
    maxNumbers: input.max_numbers ?? null,
    createdAt: deps.clock.now(),
  });
}

export async function updateAccount(deps: OpDeps, id: string, input: UpdateAccountInput): Promise<Account> {
  getAccount(deps, id);
  const patch: Partial<Account> = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.email !== undefined) patch.email = input.email;
  if (input.billing_status !== undefined) patch.billingStatus = input.billing_status;
  if (input.retention !== undefined) patch.retention = input.retention;
  if (input.max_numbers !== undefined) patch.maxNumbers = input.max_numbers;
  return orNotFound(await deps.store.directory.updateAccount(id, patch), `account ${id}`);
}

export async function createUser(deps: OpDeps, accountId: string, input: CreateUserInput): Promise<User> {
  getAccount(deps, accountId);
  const taken = () => new AppError("conflict", `A dashboard user with email ${input.email} already exists.`);
  // Checked first to spare the hash; the insert decides when two requests create the same email at once.
  if (await deps.store.users.byEmail(input.email)) throw taken();
  const user = await deps.store.users.create({
    id: randomId(deps.random, "usr"),
    accountId,
    email: input.email,
    passwordHash: await Bun.password.hash(input.password, { algorithm: "argon2id" }),
    createdAt: deps.clock.now(),
  });
  if (!user) throw taken();
  return user;
}

/** Creates a key; the plain key is returned only here and never stored. */
export async function createApiKey(
  deps: OpDeps,
  accountId: string,
  input: CreateApiKeyInput,
): Promise<{ key: string; record: ApiKey }> {
  getAccount(deps, accountId);
  const key = generateApiKey(deps.random, input.mode);
  const record = await deps.store.directory.createApiKey({
    id: randomId(deps.random, "key"),
    accountId,
    mode: input.mode,
    name: input.name ?? null,
    prefix: displayPrefix(key),
    keyHash: hashApiKey(key),
    createdAt: deps.clock.now(),
    revokedAt: null,
  });
  return { key, record };
}

/** Revokes a key; `accountId` scopes the look-up for the dashboard, where other accounts' keys are 404. */
export async function revokeApiKey(deps: OpDeps, id: string, accountId?: string): Promise<ApiKey> {
  const key = deps.store.directory.apiKey(id);
  if (!key || (accountId !== undefined && key.accountId !== accountId))
    throw new AppError("not_found", `No API key ${id}.`);
  return orNotFound(await deps.store.directory.revokeApiKey(id, deps.clock.now()), `API key ${id}`);
}

export function getWaba(deps: OpDeps, wabaId: string): Waba {
  const waba = deps.store.directory.waba(wabaId);
  if (!waba) throw new AppError("not_found", `No WABA ${wabaId}.`);
  return waba;
}

export async function createWaba(deps: OpDeps, accountId: string, input: CreateWabaInput): Promise<Waba> {
  getAccount(deps, accountId);
  if (deps.store.directory.waba(input.waba_id))
    throw new AppError("conflict", `WABA ${input.waba_id} is already connected.`);
  const now = deps.clock.now();
  return deps.store.directory.createWaba({
    ...NO_CAUSE,
    wabaId: input.waba_id,
    accountId,
    accessToken: input.access_token,
    appSecret: input.app_secret ?? null,
    status: "connected",
    createdAt: now,
    updatedAt: now,
  });
}

export async function updateWaba(deps: OpDeps, wabaId: string, input: UpdateWabaInput): Promise<Waba> {
  getWaba(deps, wabaId);
  const waba = await deps.store.directory.updateWaba(wabaId, {
    status: input.status,
    // A state set by hand has no upstream cause; a new token alone leaves the state as it is.
    ...(input.status !== undefined ? NO_CAUSE : {}),
    accessToken: input.access_token,
    updatedAt: deps.clock.now(),
  });
  return orNotFound(waba, `WABA ${wabaId}`);
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
export async function syncNumber(
  deps: OpDeps,
  phoneNumberId: string,
  options: { check?: boolean } = {},
): Promise<PhoneNumber> {
  const number = getNumber(deps, phoneNumberId);
  return applySync(deps, phoneNumberId, await fetchNumberDetails(deps, number, getWaba(deps, number.wabaId)), options);
}

/**
 * Stores what a read of the number's details from upstream gave: its details, or why it failed.
 * With `check` (someone asked to check the number again) the read is also a check of its
 * condition (SPEC 3.3), made with the WABA's token: an upstream error that sets a state sets it
 * here too, with its cause (no request id: no proxied call got it); a good read shows the token
 * works and the platform serves the number again, so a revoked token's WABA and a restricted,
 * flagged or unregistered number are connected again. The read when a number is first connected
 * is not such a check: it only fills in the details.
 */
export async function applySync(
  deps: OpDeps,
  phoneNumberId: string,
  result: SyncResult,
  { check = false }: { check?: boolean } = {},
): Promise<PhoneNumber> {
  const now = deps.clock.now();
  const number = getNumber(deps, phoneNumberId);
  if (!result.ok) {
    deps.logger.warn("number sync failed", { phone_number_id: phoneNumberId, reason: result.reason });
    const effect =
      check && result.fault
        ? effectOfFault(result.fault, { idKind: "number", wabaId: number.wabaId, phoneNumberId })
        : null;
    if (effect)
      await applyEffect({ directory: deps.store.directory, clock: deps.clock, logger: deps.logger }, effect, null);
    const failed = await deps.store.directory.updateNumber(phoneNumberId, { syncError: result.reason, updatedAt: now });
    return orNotFound(failed, `number ${phoneNumberId}`);
  }
  if (!check) {
    const read = await deps.store.directory.updateNumber(phoneNumberId, {
      ...result.details,
      syncedAt: now,
      syncError: null,
      updatedAt: now,
    });
    return orNotFound(read, `number ${phoneNumberId}`);
  }
  if (deps.store.directory.waba(number.wabaId)?.status === "token_revoked") {
    await deps.store.directory.updateWaba(number.wabaId, { status: "connected", ...NO_CAUSE, updatedAt: now });
  }
  const restored = UPSTREAM_SET.has(number.status) ? { status: "connected" as const, ...NO_CAUSE } : {};
  const checked = await deps.store.directory.updateNumber(phoneNumberId, {
    ...result.details,
    ...restored,
    syncedAt: now,
    syncError: null,
    updatedAt: now,
  });
  return orNotFound(checked, `number ${phoneNumberId}`);
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
  if (deps.store.directory.number(input.phone_number_id)) {
    throw new AppError("conflict", `Number ${input.phone_number_id} is already connected.`);
  }
  assertPlanRoom(deps, account);
  await deps.store.directory.createNumber(newNumber(accountId, input, deps.clock.now()));
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
): Promise<PhoneNumber> {
  getNumber(deps, phoneNumberId);
  const number = await deps.store.directory.updateNumber(phoneNumberId, {
    status: input.status,
    ...(input.status !== undefined ? NO_CAUSE : {}),
    updatedAt: deps.clock.now(),
  });
  return orNotFound(number, `number ${phoneNumberId}`);
}
