import { t } from "elysia";
import { getAccount } from "../accounts/accounts.ts";
import { removedOf } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { iso } from "../http/iso-time.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { live, type Onboarding } from "../store/onboardings.ts";
import { signupView } from "./signup.ts";

/** The operator's Embedded Signup records (issue 26): list and delete (expired ones are purged by src/retention/). */

type OperatorDeps = Pick<Deps, "store" | "clock" | "random">;

export const onboardingQuery = t.Object({
  account_id: t.Optional(t.String({ maxLength: 64, description: "only this account's" })),
  phone_number_id: t.Optional(t.String({ maxLength: 64, description: "only this number's" })),
});

/** An onboarding as the operator sees it: the signup's steps, its account and expiry; never its code, token or PIN. */
export const onboardingView = (o: Onboarding) => ({
  ...signupView(o),
  account_id: o.accountId,
  expires_at: iso(o.expiresAt),
  updated_at: iso(o.updatedAt),
});

/** Onboardings not expired, newest first; an unknown account is a 404. */
export async function listOnboardings(deps: OperatorDeps, query: typeof onboardingQuery.static): Promise<Onboarding[]> {
  if (query.account_id) getAccount(deps, query.account_id);
  const filter = { accountId: query.account_id || undefined, phoneNumberId: query.phone_number_id || undefined };
  return deps.store.onboardings.list(filter, deps.clock.now());
}

/** Deletes one, whatever its state: its number is free for other accounts again. */
export async function deleteOnboarding(deps: OperatorDeps, id: string, by: AuditContext): Promise<Onboarding> {
  // Read first, for the entry: one already expired is not found and is left to the sweep.
  const found = await deps.store.onboardings.get(id, deps.clock.now());
  if (!found) throw new AppError("not_found", `No onboarding ${id}.`);
  const { kind, phoneNumberId, wabaId, finishedAt } = found;
  const object = { kind: "onboarding", id };
  const entry = auditEntry(
    deps,
    by,
    "onboarding.delete",
    object,
    found.accountId,
    removedOf({ kind, phoneNumberId, wabaId, finishedAt }),
  );
  const deleted = await deps.store.onboardings.delete(id, entry);
  const o = deleted && live(deleted, deps.clock.now());
  if (!o) throw new AppError("not_found", `No onboarding ${id}.`);
  return o;
}
