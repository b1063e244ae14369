import { apiKeyMode, hashApiKey } from "../accounts/api-key.ts";
import type { ErrorName } from "../errors/catalog.ts";
import type { Directory } from "../store/store.ts";
import type { Account, ApiKey, PhoneNumber, Waba } from "../store/types.ts";
import type { Route } from "./allow-list.ts";
import type { Match } from "./match.ts";

/** The checks of docs/proxy.md#order-of-checks, steps 2 to 6, as plain functions over the in-memory directory. */

/** What a request is about once ownership is settled. `number` is the number the call acts for, if any. */
export interface Target {
  route: Route;
  waba: Waba;
  number: PhoneNumber | null;
}

/** Step 2: a live, well-formed `px_` key from `Authorization: Bearer …`, or null (401). */
export function authenticate(directory: Directory, authorization: string | null): ApiKey | null {
  if (!authorization || authorization.length < 7 || authorization.slice(0, 7).toLowerCase() !== "bearer ") return null;
  const key = authorization.slice(7).trim();
  if (apiKeyMode(key) === null) return null;
  const found = directory.apiKeyByHash(hashApiKey(key));
  return found && found.revokedAt === null ? found : null;
}

/** Step 3: why the account may not use the proxy (402), or null. */
export function billingError(account: Account | undefined): ErrorName | null {
  switch (account?.billingStatus) {
    case "active":
      return null;
    case "overdue":
      return "payment_overdue";
    case "suspended":
      return "account_suspended";
    default:
      return "no_subscription";
  }
}

/**
 * Step 4: the first matching row whose id is of the right kind and on the account, or null (404).
 * Ids of other accounts fall through exactly like unknown ids, so nothing reveals that they exist.
 */
export function resolveTarget(directory: Directory, match: Match, accountId: string): Target | null {
  for (const route of match.routes) {
    const target =
      route.id === "waba"
        ? wabaTarget(directory, route, match.id, accountId)
        : numberTarget(directory, route, match, accountId);
    if (target) return target;
  }
  return null;
}

/** A WABA row: the WABA itself, when it is on the account. */
function wabaTarget(directory: Directory, route: Route, wabaId: string, accountId: string): Target | null {
  const waba = directory.waba(wabaId);
  return waba && waba.accountId === accountId ? { route, waba, number: null } : null;
}

/** A number or media row: the number it acts for, when it is on the account, with its WABA. */
function numberTarget(directory: Directory, route: Route, match: Match, accountId: string): Target | null {
  // Media calls act for the number in `phone_number_id`. An id the directory knows as a number
  // or WABA is not a media id: forwarding it would let a shared upstream token read an object
  // that is not on the allow-list (or belongs to another account).
  if (route.id === "media" && (directory.number(match.id) || directory.waba(match.id))) return null;
  const numberId = route.id === "media" ? match.scopeNumberId : match.id;
  // Never null: matchRoute keeps a media route only with its scope.
  if (numberId === null) return null;
  const number = directory.number(numberId);
  if (!number || number.accountId !== accountId) return null;
  const waba = directory.waba(number.wabaId);
  return waba ? { route, waba, number } : null;
}

/**
 * Step 5: test keys work only with sandbox numbers. A WABA call with a test key counts as sandbox
 * use only when every number of that WABA is a sandbox number.
 */
export function testKeyRefused(directory: Directory, key: ApiKey, target: Target): boolean {
  if (key.mode !== "test") return false;
  if (target.number) return target.number.kind !== "sandbox";
  const numbers = directory.numbersOfWaba(target.waba.wabaId);
  return numbers.length === 0 || numbers.some((n) => n.kind !== "sandbox");
}

const NUMBER_STATE: Record<PhoneNumber["status"], ErrorName | null> = {
  connected: null,
  disconnected: "number_disconnected",
  restricted: "number_restricted",
  flagged: "number_flagged",
  not_registered: "number_not_registered",
};

/** Step 6: why the WABA or number cannot be used (422), WABA first, or null. */
export function connectionError(target: Target): ErrorName | null {
  if (target.waba.status === "token_revoked") return "waba_token_revoked";
  if (target.waba.status === "disconnected") return "waba_disconnected";
  return target.number ? NUMBER_STATE[target.number.status] : null;
}
