import { and, eq, gt, isNotNull, isNull, lte, or, type Column } from "drizzle-orm";
import type { Sealer } from "../crypto/sealer.ts";
import type { Onboarding, OnboardingFilter } from "./onboardings.ts";

/** An onboardings row as both backends' schemas read it: secrets sealed, the records as JSON text. */
export interface OnboardingRow {
  id: string;
  accountId: string;
  phoneNumberId: string;
  wabaId: string;
  kind: Onboarding["kind"];
  codeEnc: string | null;
  codeHash: string | null;
  accessTokenEnc: string | null;
  pinEnc: string | null;
  steps: string;
  preflights: string;
  syncs: string;
  finishedAt: number | null;
  leaseUntil: number | null;
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

const seal = (sealer: Sealer, value: string | null) => (value === null ? null : sealer.seal(value));
const open = (sealer: Sealer, value: string | null) => (value === null ? null : sealer.open(value));

export function toOnboardingRow(o: Onboarding, sealer: Sealer): OnboardingRow {
  const { code, accessToken, pin, steps, preflights, syncs, ...rest } = o;
  return {
    ...rest,
    codeEnc: seal(sealer, code),
    accessTokenEnc: seal(sealer, accessToken),
    pinEnc: seal(sealer, pin),
    steps: JSON.stringify(steps),
    preflights: JSON.stringify(preflights),
    syncs: JSON.stringify(syncs),
  };
}

export function fromOnboardingRow(row: OnboardingRow, sealer: Sealer): Onboarding {
  const { codeEnc, accessTokenEnc, pinEnc, steps, preflights, syncs, ...rest } = row;
  return {
    ...rest,
    code: open(sealer, codeEnc),
    accessToken: open(sealer, accessTokenEnc),
    pin: open(sealer, pinEnc),
    steps: JSON.parse(steps),
    preflights: JSON.parse(preflights),
    syncs: JSON.parse(syncs),
    finishedAt: row.finishedAt === null ? null : Number(row.finishedAt),
    leaseUntil: row.leaseUntil === null ? null : Number(row.leaseUntil),
    expiresAt: row.expiresAt === null ? null : Number(row.expiresAt),
    createdAt: Number(row.createdAt),
    updatedAt: Number(row.updatedAt),
  };
}

/** The columns a run writes (not the pre-flights and syncs, which their own writes merge). */
export function runColumns(o: Onboarding, sealer: Sealer) {
  const {
    id: _id,
    accountId: _a,
    phoneNumberId: _p,
    preflights: _f,
    syncs: _s,
    createdAt: _c,
    ...run
  } = toOnboardingRow(o, sealer);
  return run;
}

export const NO_SEALED_SECRETS = { codeEnc: null, accessTokenEnc: null, pinEnc: null };

type ExpiryColumns = Record<"finishedAt" | "expiresAt" | "codeEnc" | "accessTokenEnc" | "pinEnc", Column>;
type OnboardingColumns = ExpiryColumns & Record<"id" | "accountId" | "phoneNumberId", Column>;

/** The look-ups' conditions in both backends' SQL (each backend adds `expiryConditions(…).notGone`). */
export function onboardingWhere(t: OnboardingColumns) {
  return {
    id: (id: string) => eq(t.id, id),
    number: (accountId: string, phoneNumberId: string) =>
      and(eq(t.accountId, accountId), eq(t.phoneNumberId, phoneNumberId)),
    unfinished: (accountId: string) => and(eq(t.accountId, accountId), isNull(t.finishedAt)),
    filter: (filter: OnboardingFilter) =>
      and(
        filter.accountId === undefined ? undefined : eq(t.accountId, filter.accountId),
        filter.phoneNumberId === undefined ? undefined : eq(t.phoneNumberId, filter.phoneNumberId),
      ),
  };
}

/**
 * Expiry in both backends' SQL: what every look-up keeps (not expired; a finished onboarding whose
 * later run expired stays, `live` drops its secrets), what the sweep deletes (runs never finished,
 * expired) and what it only strips of its secrets (the finished ones: their expiry stays, so a
 * retry knows the run lapsed).
 */
export function expiryConditions(t: ExpiryColumns, now: number) {
  const due = and(isNotNull(t.expiresAt), lte(t.expiresAt, now));
  return {
    notGone: or(isNotNull(t.finishedAt), isNull(t.expiresAt), gt(t.expiresAt, now)),
    deleting: and(due, isNull(t.finishedAt)),
    dropping: and(
      due,
      isNotNull(t.finishedAt),
      or(isNotNull(t.codeEnc), isNotNull(t.accessTokenEnc), isNotNull(t.pinEnc)),
    ),
  };
}
