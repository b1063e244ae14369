import { getAccount } from "../accounts/accounts.ts";
import { changesOf } from "../audit/changes.ts";
import { auditEntry, changeEntry, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import type { WabaPatch } from "../store/store.ts";
import { NO_CAUSE, type Waba } from "../store/types.ts";
import type { CreateWabaInput, UpdateWabaInput } from "./schemas.ts";

/**
 * An account's WABAs, as plain functions the operator API, the CLI and the signup steps call. Each
 * change is made by someone (`by`), and the store writes its audit entry with it.
 */
type WabaDeps = Pick<Deps, "store" | "clock" | "random">;

export function getWaba(deps: Pick<WabaDeps, "store">, wabaId: string): Waba {
  const waba = deps.store.directory.waba(wabaId);
  if (!waba) throw new AppError("not_found", `No WABA ${wabaId}.`);
  return waba;
}

export async function createWaba(
  deps: WabaDeps,
  accountId: string,
  input: CreateWabaInput,
  by: AuditContext,
): Promise<Waba> {
  getAccount(deps, accountId);
  const taken = () => new AppError("conflict", `WABA ${input.waba_id} is already connected.`);
  // Checked first to answer without a write; the insert decides when two requests create one id at once.
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
  const created = await deps.store.directory.createWaba(waba, entry);
  if (!created) throw taken();
  return created;
}

export async function updateWaba(
  deps: WabaDeps,
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
export async function changeWaba(
  deps: WabaDeps,
  waba: Waba,
  patch: WabaPatch,
  by: AuditContext | undefined,
): Promise<Waba> {
  const object = { kind: "waba", id: waba.wabaId };
  const entry = by && changeEntry(deps, by, "waba.update", object, waba.accountId, changesOf(waba, patch));
  return orNotFound(await deps.store.directory.updateWaba(waba.wabaId, patch, entry), `WABA ${waba.wabaId}`);
}
