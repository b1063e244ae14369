import { t } from "elysia";
import { getAccount } from "../accounts/accounts.ts";
import { changesOf } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { applySync, assertPlanRoom, newNumber, syncNumber } from "./numbers.ts";
import { createNumberBody, createWabaBody } from "./schemas.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { connectRefusal, type Refusal } from "../store/ownership.ts";
import { NO_CAUSE, type NumberKind, type PhoneNumber, type Waba } from "../store/types.ts";
import { fetchNumberDetails, type SyncResult } from "./sync.ts";

/** What the account gives to connect a bring-your-own number: the WABA, the number, its token and app secret. */
export const connectNumberBody = t.Object(
  {
    waba_id: createWabaBody.properties.waba_id,
    phone_number_id: createNumberBody.properties.phone_number_id,
    access_token: createWabaBody.properties.access_token,
    app_secret: t.String({ minLength: 1, maxLength: 256, description: "the app secret of the customer's own app" }),
  },
  { additionalProperties: false },
);

export type ConnectNumberInput = typeof connectNumberBody.static;

type ConnectDeps = Pick<Deps, "store" | "clock" | "random" | "config" | "fetch" | "logger">;

/** A number of this account; another account's number is "not found", exactly like a missing one. */
export function accountNumber(deps: ConnectDeps, accountId: string, phoneNumberId: string): PhoneNumber {
  const number = deps.store.directory.number(phoneNumberId);
  if (!number || number.accountId !== accountId) throw new AppError("not_found", `No number ${phoneNumberId}.`);
  return number;
}

/** A refusal of connectRefusal in words; another account's number or WABA is named only as taken. */
function notConnectable(
  deps: Pick<ConnectDeps, "store">,
  refusal: Refusal,
  byo: boolean,
  phoneNumberId: string,
  wabaId: string,
) {
  const under = deps.store.directory.number(phoneNumberId)?.wabaId;
  const words = {
    number_taken: `Number ${phoneNumberId} is already connected.`,
    number_elsewhere: `Number ${phoneNumberId} is already connected under WABA ${under}.`,
    waba_taken: `WABA ${wabaId} is already connected.`,
    waba_other_app: byo
      ? `WABA ${wabaId} is connected through the service's own app; ask your operator to change it.`
      : `WABA ${wabaId} is connected as a bring-your-own WABA with its own app.`,
  } satisfies Record<Refusal, string>;
  return new AppError("conflict", words[refusal]);
}

/**
 * The number and WABA already stored under these ids, when this account may connect them through
 * its own app (`byo`) or the service's: a number or WABA of another account, the number under
 * another WABA, or the WABA on the other kind of app is a 409.
 */
export function connectable(
  deps: Pick<ConnectDeps, "store">,
  accountId: string,
  phoneNumberId: string,
  wabaId: string,
  byo: boolean,
): { number?: PhoneNumber; waba?: Waba } {
  const number = deps.store.directory.number(phoneNumberId);
  const waba = deps.store.directory.waba(wabaId);
  const stored = { waba: waba && { accountId: waba.accountId, byo: waba.appSecret !== null }, number };
  const refused = connectRefusal(accountId, wabaId, byo, stored);
  if (refused) throw notConnectable(deps, refused, byo, phoneNumberId, wabaId);
  return { number, waba };
}

export interface Connection {
  phoneNumberId: string;
  wabaId: string;
  kind: NumberKind;
  accessToken: string;
  /** The customer's own app's secret (BYO); null: the service's app (Embedded Signup). */
  appSecret: string | null;
}

/**
 * Stores a number and its WABA once upstream accepted them, with the details just read: one write
 * that checks again that both are free or this account's (Directory.connect; a 409 and nothing
 * written otherwise), a WABA already there taking the new token. A new number must fit the plan;
 * with `reconnect`, so must one that was disconnected, which is connected again. The connection is
 * recorded as the number's `number.create` (or `number.update` when it was stored) by `by`, with
 * the WABA's new token and app secret named as changed; the details read and the check that
 * follow are part of it.
 */
export async function connectNumber(
  deps: ConnectDeps,
  accountId: string,
  c: Connection,
  details: SyncResult,
  by: AuditContext,
  { reconnect = false } = {},
): Promise<PhoneNumber> {
  const stored = deps.store.directory.number(c.phoneNumberId);
  const reconnecting = reconnect && stored?.accountId === accountId && stored.status === "disconnected";
  if (!stored || reconnecting) assertPlanRoom(deps, getAccount(deps, accountId));
  const now = deps.clock.now();
  const number = newNumber(accountId, { phone_number_id: c.phoneNumberId, waba_id: c.wabaId, kind: c.kind }, now);
  const changes = {
    ...changesOf(stored ?? null, stored ? (reconnecting ? { status: "connected" } : {}) : number),
    ...changesOf(deps.store.directory.waba(c.wabaId) ?? null, { accessToken: c.accessToken, appSecret: c.appSecret }),
  };
  const action = stored ? "number.update" : "number.create";
  const connected = await deps.store.directory.connect(
    {
      ...NO_CAUSE,
      wabaId: c.wabaId,
      accountId,
      accessToken: c.accessToken,
      appSecret: c.appSecret,
      status: "connected",
      createdAt: now,
      updatedAt: now,
    },
    number,
    auditEntry(deps, by, action, { kind: "number", id: c.phoneNumberId }, accountId, changes),
  );
  if ("refused" in connected)
    throw notConnectable(deps, connected.refused, c.appSecret !== null, c.phoneNumberId, c.wabaId);
  if (reconnecting) {
    await deps.store.directory.updateNumber(c.phoneNumberId, { status: "connected", ...NO_CAUSE, updatedAt: now });
  }
  // A number stored before: the read is also a check of its condition (see applySync).
  return applySync(deps, c.phoneNumberId, details, { check: !connected.created });
}

/**
 * Connects a bring-your-own number (or reconnects one whose token was revoked). The credentials are
 * tried against upstream first, so a typo stores nothing. Connecting another number of an
 * already-connected BYO WABA, or the same number again, refreshes that WABA's token and app secret.
 */
export async function connectByoNumber(
  deps: ConnectDeps,
  accountId: string,
  input: ConnectNumberInput,
  by: AuditContext,
): Promise<PhoneNumber> {
  const { number: existingNumber } = connectable(deps, accountId, input.phone_number_id, input.waba_id, true);
  // Refuse before upstream is asked: a 409 must leave the WABA untouched.
  if (!existingNumber) assertPlanRoom(deps, getAccount(deps, accountId));

  const check = await fetchNumberDetails(
    deps,
    { phoneNumberId: input.phone_number_id },
    { accessToken: input.access_token, appSecret: input.app_secret },
  );
  if (!check.ok)
    throw new AppError("invalid_credentials", `The platform did not accept these details: ${check.reason}.`);
  // The details were just read with these credentials: stored rather than asked for again.
  const connection: Connection = {
    phoneNumberId: input.phone_number_id,
    wabaId: input.waba_id,
    kind: "byo",
    accessToken: input.access_token,
    appSecret: input.app_secret,
  };
  return connectNumber(deps, accountId, connection, check, by);
}

/** Check again: re-reads one of the account's numbers from upstream (throughput level, display name, condition). */
export async function resyncNumber(
  deps: ConnectDeps,
  accountId: string,
  phoneNumberId: string,
  by: AuditContext,
): Promise<PhoneNumber> {
  accountNumber(deps, accountId, phoneNumberId);
  return syncNumber(deps, phoneNumberId, { check: true, by });
}
