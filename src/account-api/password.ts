import { t } from "elysia";
import { getUser, passwordChanged } from "../accounts/logins.ts";
import { createUserBody } from "../accounts/schemas.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { checkPassword, hashToken } from "../auth/sign-in.ts";
import { hashPassword } from "../crypto/password.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";

/** A signed-in dashboard user's change of their own password (docs/operations.md#customer-logins). */
export const changePasswordBody = t.Object(
  { current_password: t.String({ minLength: 1, maxLength: 200 }), password: createUserBody.properties.password },
  { additionalProperties: false },
);
export type ChangePasswordInput = typeof changePasswordBody.static;

/**
 * The current password is checked as a sign-in checks it (a wrong one counts as a failed sign-in
 * of their email from their address, so guessing through a stolen session is throttled alike), then every other
 * session of theirs ends; `sessionToken` is the cookie of the one that asked, which stays.
 */
export async function changeOwnPassword(
  deps: Pick<Deps, "store" | "clock" | "random">,
  userId: string,
  sessionToken: string,
  input: ChangePasswordInput,
  by: AuditContext,
): Promise<void> {
  const user = await getUser(deps, userId);
  const object = { kind: "user", id: user.id };
  try {
    const attempt = { email: user.email, password: input.current_password, ip: by.ip };
    await checkPassword(deps, "user", deps.store.users, attempt, () =>
      auditEntry(deps, by, "session.failed", object, user.accountId),
    );
  } catch (error) {
    if (error instanceof AppError && error.errorName === "unauthorized")
      throw new AppError("invalid_request", "current_password: this is not your current password.");
    throw error;
  }
  const entry = auditEntry(deps, by, "user.change_password", object, user.accountId, passwordChanged);
  const hash = await hashPassword(input.password);
  if (!(await deps.store.users.setPasswordHash(user.id, hash, entry, hashToken(sessionToken))))
    throw new AppError("unauthorized", "Sign in first.");
}
