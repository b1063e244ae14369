import { getAccount } from "../accounts/accounts.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import { NO_CAUSE, type Waba } from "../store/types.ts";
import type { CreateWabaInput, UpdateWabaInput } from "./schemas.ts";

/** An account's WABAs, as plain functions the operator API, the CLI and the signup steps call. */
type WabaDeps = Pick<Deps, "store" | "clock">;

export function getWaba(deps: WabaDeps, wabaId: string): Waba {
  const waba = deps.store.directory.waba(wabaId);
  if (!waba) throw new AppError("not_found", `No WABA ${wabaId}.`);
  return waba;
}

export async function createWaba(deps: WabaDeps, accountId: string, input: CreateWabaInput): Promise<Waba> {
  getAccount(deps, accountId);
  const taken = () => new AppError("conflict", `WABA ${input.waba_id} is already connected.`);
  // Checked first to answer without a write; the insert decides when two requests create one id at once.
  if (deps.store.directory.waba(input.waba_id)) throw taken();
  const now = deps.clock.now();
  const waba = await deps.store.directory.createWaba({
    ...NO_CAUSE,
    wabaId: input.waba_id,
    accountId,
    accessToken: input.access_token,
    appSecret: input.app_secret ?? null,
    status: "connected",
    createdAt: now,
    updatedAt: now,
  });
  if (!waba) throw taken();
  return waba;
}

export async function updateWaba(deps: WabaDeps, wabaId: string, input: UpdateWabaInput): Promise<Waba> {
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
