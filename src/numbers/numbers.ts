import { getAccount } from "../accounts/accounts.ts";
import { changesOf } from "../audit/changes.ts";
import { auditEntry, changeEntry, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import type { NumberPatch } from "../store/store.ts";
import { NO_CAUSE, type Account, type PhoneNumber } from "../store/types.ts";
import type { CreateNumberInput, UpdateNumberInput } from "./schemas.ts";
import { causeOf, effectOfFault, logEffect } from "./state-change.ts";
import { fetchNumberDetails, type SyncResult } from "./sync.ts";
import { changeWaba, getWaba } from "./wabas.ts";

/**
 * An account's numbers, as plain functions the operator API, the CLI, the dashboard and the
 * signup steps call: connecting one, reading its details from upstream, changing its state. Each
 * change is made by someone (`by`), and the store writes its audit entry with it.
 */
type NumberDeps = Pick<Deps, "store" | "clock" | "random" | "config" | "fetch" | "logger">;

export function getNumber(deps: NumberDeps, phoneNumberId: string): PhoneNumber {
  const number = deps.store.directory.number(phoneNumberId);
  if (!number) throw new AppError("not_found", `No number ${phoneNumberId}.`);
  return number;
}

/**
 * Re-reads a number's details from upstream; on failure the number keeps its level and records
 * why. `check`: the read is also a check of its condition ("Check again", see applySync).
 */
export async function syncNumber(
  deps: NumberDeps,
  phoneNumberId: string,
  options: SyncOptions = {},
): Promise<PhoneNumber> {
  const number = getNumber(deps, phoneNumberId);
  return applySync(deps, phoneNumberId, await fetchNumberDetails(deps, number, getWaba(deps, number.wabaId)), options);
}

/** `check`: the read checks the number's condition; `by`: who asked, recorded as `number.sync` (and `waba.update`). */
export interface SyncOptions {
  check?: boolean;
  by?: AuditContext;
}

/** What applySync works on: the number before, the patch it fills, and the WABA it may change. */
interface SyncStep {
  deps: NumberDeps;
  number: PhoneNumber;
  waba: ReturnType<NumberDeps["store"]["directory"]["waba"]>;
  patch: NumberPatch;
  now: number;
  check: boolean;
  by: AuditContext | undefined;
}

/** A failed read: its reason on the number; in a check, the state its upstream error sets (the number's or the WABA's). */
async function failedRead(step: SyncStep, result: Extract<SyncResult, { ok: false }>): Promise<void> {
  const { deps, number, waba, patch, now, by } = step;
  const phoneNumberId = number.phoneNumberId;
  deps.logger.warn("number sync failed", { phone_number_id: phoneNumberId, reason: result.reason });
  patch.syncError = result.reason;
  const effect =
    step.check && result.fault
      ? effectOfFault(result.fault, { idKind: "number", wabaId: number.wabaId, phoneNumberId })
      : null;
  if (!effect) return;
  logEffect(deps.logger, effect, null);
  const cause = causeOf(effect.fault, now, null);
  if (!("waba" in effect)) Object.assign(patch, { status: effect.status, ...cause });
  else if (waba) await changeWaba(deps, waba, { status: "token_revoked", ...cause, updatedAt: now }, by);
}

/** A good read: the details; in a check, a revoked token's WABA and a state only upstream sets are connected again. */
async function goodRead(step: SyncStep, result: Extract<SyncResult, { ok: true }>): Promise<void> {
  const { deps, number, waba, patch, now, check, by } = step;
  Object.assign(patch, result.details, { syncedAt: now, syncError: null });
  if (check && waba?.status === "token_revoked")
    await changeWaba(deps, waba, { status: "connected", ...NO_CAUSE, updatedAt: now }, by);
  if (check && UPSTREAM_SET.has(number.status)) Object.assign(patch, { status: "connected", ...NO_CAUSE });
}

/**
 * Stores what a read of the number's details from upstream gave: its details, or why it failed.
 * With `check` (someone asked to check the number again) the read is also a check of its
 * condition (docs/proxy.md#upstream-errors-that-change-a-state), made with the WABA's token: an upstream error that
 * sets a state sets it here too, with its cause (no request id: no proxied call got it); a good read shows the token
 * works and the platform serves the number again, so a revoked token's WABA and a restricted,
 * flagged or unregistered number are connected again. The read when a number is first connected
 * is not such a check: it only fills in the details. The number is written once, with its entry
 * when `by` is given; a WABA it changes, with its own.
 */
export async function applySync(
  deps: NumberDeps,
  phoneNumberId: string,
  result: SyncResult,
  { check = false, by }: SyncOptions = {},
): Promise<PhoneNumber> {
  const now = deps.clock.now();
  const number = getNumber(deps, phoneNumberId);
  const waba = deps.store.directory.waba(number.wabaId);
  const patch: NumberPatch = { updatedAt: now };
  const step: SyncStep = { deps, number, waba, patch, now, check, by };
  if (result.ok) await goodRead(step, result);
  else await failedRead(step, result);
  const object = { kind: "number", id: phoneNumberId };
  const entry = by && auditEntry(deps, by, "number.sync", object, number.accountId, changesOf(number, patch));
  return orNotFound(await deps.store.directory.updateNumber(phoneNumberId, patch, entry), `number ${phoneNumberId}`);
}

/**
 * The number states only upstream sets (docs/proxy.md#upstream-errors-that-change-a-state), which a good read of the
 * number ends.
 */
const UPSTREAM_SET = new Set<PhoneNumber["status"]>(["restricted", "flagged", "not_registered"]);

/** 409 plan_limit when the account already uses every number its plan allows (disconnected ones do not count). */
export function assertPlanRoom(deps: NumberDeps, account: Account): void {
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
  deps: NumberDeps,
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
  deps: NumberDeps,
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
  const entry = changeEntry(deps, by, "number.update", object, number.accountId, changesOf(number, patch));
  return orNotFound(await deps.store.directory.updateNumber(phoneNumberId, patch, entry), `number ${phoneNumberId}`);
}
