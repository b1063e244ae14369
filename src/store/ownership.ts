import type { PhoneNumber, Waba } from "./types.ts";

/** Why an account may not connect a number under a WABA (issue 26). */
export type Refusal = "number_taken" | "number_elsewhere" | "waba_taken" | "waba_other_app";

/** What Directory.connect did: the WABA and number as stored, and whether the number is new; or why it wrote nothing. */
export type Connected = { waba: Waba; number: PhoneNumber; created: boolean } | { refused: Refusal };

/**
 * Whether `accountId` may connect number `phoneNumberId` under WABA `wabaId` through the service's
 * app (`byo` false: Embedded Signup) or its own (`byo` true), given what is stored under those ids:
 * each must be free or already this account's, the number under this WABA, the WABA on the same
 * kind of app. The one rule of the checks made before anything is asked upstream and of the write
 * itself, which runs it again in its transaction.
 */
export function connectRefusal(
  accountId: string,
  wabaId: string,
  byo: boolean,
  stored: { waba?: { accountId: string; byo: boolean }; number?: Pick<PhoneNumber, "accountId" | "wabaId"> },
): Refusal | null {
  const { waba, number } = stored;
  if (number && number.accountId !== accountId) return "number_taken";
  if (number && number.wabaId !== wabaId) return "number_elsewhere";
  if (waba && waba.accountId !== accountId) return "waba_taken";
  if (waba && waba.byo !== byo) return "waba_other_app";
  return null;
}
