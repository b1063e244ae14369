import { t } from "elysia";
import { applySync, assertPlanRoom, createNumber, createWaba, getAccount, syncNumber } from "../admin/operations.ts";
import { createNumberBody, createWabaBody } from "../admin/schemas.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../runtime/deps.ts";
import { NO_CAUSE, type PhoneNumber, type Waba } from "../store/types.ts";
import { fetchNumberDetails } from "./sync.ts";

/** What the account gives to connect a bring-your-own number: the WABA, the number, its token and app secret. */
export const connectNumberBody = t.Object({
  waba_id: createWabaBody.properties.waba_id,
  phone_number_id: createNumberBody.properties.phone_number_id,
  access_token: createWabaBody.properties.access_token,
  app_secret: t.String({ minLength: 1, maxLength: 256, description: "the app secret of the customer's own app" }),
}, { additionalProperties: false });

export type ConnectNumberInput = typeof connectNumberBody.static;

type ConnectDeps = Pick<Deps, "store" | "clock" | "random" | "config" | "fetch" | "logger">;

/** A number of this account; another account's number is "not found", exactly like a missing one. */
export function accountNumber(deps: ConnectDeps, accountId: string, phoneNumberId: string): PhoneNumber {
  const number = deps.store.directory.number(phoneNumberId);
  if (!number || number.accountId !== accountId) throw new AppError("not_found", `No number ${phoneNumberId}.`);
  return number;
}

/**
 * The number and WABA already stored under these ids, when this account may connect them: a
 * number or WABA of another account, or the number under another WABA, is a 409.
 */
export function connectable(deps: Pick<ConnectDeps, "store">, accountId: string, phoneNumberId: string, wabaId: string): { number?: PhoneNumber; waba?: Waba } {
  const number = deps.store.directory.number(phoneNumberId);
  if (number && (number.accountId !== accountId || number.wabaId !== wabaId)) {
    throw new AppError("conflict", `Number ${phoneNumberId} is already connected${number.accountId === accountId ? ` under WABA ${number.wabaId}` : ""}.`);
  }
  const waba = deps.store.directory.waba(wabaId);
  if (waba && waba.accountId !== accountId) throw new AppError("conflict", `WABA ${wabaId} is already connected.`);
  return { number, waba };
}

/**
 * Connects a bring-your-own number (or reconnects one whose token was revoked). The credentials are
 * tried against upstream first, so a typo stores nothing. Connecting another number of an
 * already-connected BYO WABA, or the same number again, refreshes that WABA's token and app secret.
 */
export async function connectByoNumber(deps: ConnectDeps, accountId: string, input: ConnectNumberInput): Promise<PhoneNumber> {
  const { number: existingNumber, waba: existingWaba } = connectable(deps, accountId, input.phone_number_id, input.waba_id);
  if (existingWaba && existingWaba.appSecret === null) {
    throw new AppError("conflict", `WABA ${input.waba_id} is connected through the service's own app; ask your operator to change it.`);
  }

  // Refuse before anything is stored or upstream is asked: a 409 must leave the WABA untouched.
  if (!existingNumber) assertPlanRoom(deps, getAccount(deps, accountId));

  const check = await fetchNumberDetails(deps, { phoneNumberId: input.phone_number_id }, { accessToken: input.access_token, appSecret: input.app_secret });
  if (!check.ok) throw new AppError("invalid_credentials", `The platform did not accept these details: ${check.reason}.`);

  if (existingWaba) {
    await deps.store.directory.updateWaba(input.waba_id, {
      status: "connected", ...NO_CAUSE, accessToken: input.access_token, appSecret: input.app_secret, updatedAt: deps.clock.now(),
    });
  } else {
    await createWaba(deps, accountId, { waba_id: input.waba_id, access_token: input.access_token, app_secret: input.app_secret });
  }
  // The details were just read with these credentials: store them rather than asking upstream again.
  if (existingNumber) return applySync(deps, input.phone_number_id, check, { check: true });
  return createNumber(deps, accountId, { phone_number_id: input.phone_number_id, waba_id: input.waba_id, kind: "byo" }, check);
}

/** Re-reads one of the account's numbers from upstream (throughput level, display name). */
export async function resyncNumber(deps: ConnectDeps, accountId: string, phoneNumberId: string): Promise<PhoneNumber> {
  accountNumber(deps, accountId, phoneNumberId);
  return syncNumber(deps, phoneNumberId, { check: true });
}
