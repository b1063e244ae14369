import { createAccountWithUser, createUser, getAccount, updateAccount } from "../accounts/accounts.ts";
import { revokeApiKey } from "../accounts/keys.ts";
import type { AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import { syncNumber } from "../numbers/numbers.ts";
import type { ApiKey, BillingStatus, PhoneNumber } from "../store/types.ts";
import type { CreateAccountForm } from "./forms.ts";

/**
 * Every change the console makes, one function per action, each through the operator API's own
 * operations (src/accounts/, src/numbers/), so the console and the API behave alike; `by` (the
 * signed-in operator) is recorded in the audit log.
 */
type ActionDeps = Parameters<typeof createUser>[0] & Parameters<typeof syncNumber>[0];

/** A new account and its first dashboard login, in one change: a taken login email creates nothing. */
export const createAccountWithLogin = (deps: ActionDeps, form: CreateAccountForm, by: AuditContext) =>
  createAccountWithUser(
    deps,
    { name: form.name, email: form.email, billing_status: form.billing_status, retention: form.retention },
    { email: form.user_email, password: form.user_password },
    by,
  );

export const addUser = (
  deps: ActionDeps,
  accountId: string,
  form: { email: string; password: string },
  by: AuditContext,
) => createUser(deps, accountId, form, by);

export const setBillingStatus = (deps: ActionDeps, accountId: string, status: BillingStatus, by: AuditContext) =>
  updateAccount(deps, accountId, { billing_status: status }, by);

/** Revokes one of the account's keys; another account's key is 404, as an unknown one. */
export function revokeKey(deps: ActionDeps, accountId: string, keyId: string, by: AuditContext): Promise<ApiKey> {
  getAccount(deps, accountId);
  return revokeApiKey(deps, keyId, by, accountId);
}

/** Check again (the operator API's sync): the number must be the account's, else 404 as an unknown one. */
export async function checkNumber(
  deps: ActionDeps,
  accountId: string,
  phoneNumberId: string,
  by: AuditContext,
): Promise<PhoneNumber> {
  getAccount(deps, accountId);
  const number = deps.store.directory.number(phoneNumberId);
  if (!number || number.accountId !== accountId) throw new AppError("not_found", `No number ${phoneNumberId}.`);
  return syncNumber(deps, phoneNumberId, { check: true, by });
}
