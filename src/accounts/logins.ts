import { t } from "elysia";
import { removedOf, SECRET_BEFORE, SECRET_CHANGED } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { hashPassword } from "../crypto/password.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";
import type { User } from "../store/types.ts";
import { getAccount } from "./accounts.ts";
import { createUserBody } from "./schemas.ts";

/**
 * An account's dashboard logins after they are made (docs/operations.md#customer-logins): listed,
 * given a new password, or removed by the operator. Either ends every session of the user, in the
 * transaction that records it.
 */
type LoginDeps = Pick<Deps, "store" | "clock" | "random">;

export const resetPasswordBody = t.Object(
  { password: createUserBody.properties.password },
  { additionalProperties: false },
);

const noUser = (id: string) => new AppError("not_found", `No dashboard user ${id}.`);

/** A user by id; `accountId` scopes the look-up (the console's account page), where another account's user is 404. */
export async function getUser(deps: LoginDeps, id: string, accountId?: string): Promise<User> {
  const user = await deps.store.users.byId(id);
  if (!user || (accountId !== undefined && user.accountId !== accountId)) throw noUser(id);
  return user;
}

/** The account's logins, oldest first; 404 for an account that does not exist. */
export async function listUsers(deps: LoginDeps, accountId: string): Promise<User[]> {
  getAccount(deps, accountId);
  return deps.store.users.ofAccount(accountId);
}

export const passwordChanged = { password: [SECRET_BEFORE, SECRET_CHANGED] as [unknown, unknown] };

/** The operator sets a new password: every session of the user ends. */
export async function resetUserPassword(
  deps: LoginDeps,
  id: string,
  input: typeof resetPasswordBody.static,
  by: AuditContext,
  accountId?: string,
): Promise<User> {
  const user = await getUser(deps, id, accountId);
  const entry = auditEntry(deps, by, "user.reset_password", { kind: "user", id }, user.accountId, passwordChanged);
  if (!(await deps.store.users.setPasswordHash(id, await hashPassword(input.password), entry))) throw noUser(id);
  return user;
}

/** The operator removes a login: its sessions end with it. */
export async function deleteUser(deps: LoginDeps, id: string, by: AuditContext, accountId?: string): Promise<User> {
  const user = await getUser(deps, id, accountId);
  const entry = auditEntry(
    deps,
    by,
    "user.delete",
    { kind: "user", id },
    user.accountId,
    removedOf({ email: user.email }),
  );
  if (!(await deps.store.users.delete(id, entry))) throw noUser(id);
  return user;
}
