import { auditEntry, byOperator, type AuditContext } from "../audit/entry.ts";
import { readCookie } from "../auth/session-routes.ts";
import { checkPassword, hashToken, newSessionToken, SESSION_TTL_MS } from "../auth/sign-in.ts";
import type { Deps } from "../deps.ts";
import type { Operator, OperatorSession } from "../store/operators.ts";

/**
 * The operator console's cookie: another name than the dashboard's, and its value is looked up in
 * operator sessions only, so an account user's cookie never opens /operator and an operator's
 * never opens /dashboard or /api.
 */
export const OPERATOR_COOKIE = "sb_operator";

type SessionDeps = Pick<Deps, "store" | "clock" | "random">;

/** The operator cookie's value a request carries, if any. */
export const operatorToken = (request: Request) => readCookie(request.headers.get("cookie"), OPERATOR_COOKIE);

/** Who a failed sign-in of an email no operator has names. */
const UNKNOWN_OPERATOR = { kind: "operator", id: "unknown", email: null } as const;

/** An operator's sign-in, failed sign-in or sign-out, in the audit log: theirs, in no account. */
const sessionEntry = (
  deps: SessionDeps,
  by: AuditContext,
  action: "session.create" | "session.failed" | "session.delete",
) => auditEntry(deps, by, action, { kind: "operator", id: by.actor.id }, null);

/**
 * Checks the password (throttled as the dashboard's sign-in is) and opens an operator session;
 * returns the cookie value. Each is recorded with `ip`: a wrong password as `session.failed` of
 * the operator of that email, or of an unknown one (the email itself is not kept: it may be a
 * password typed in the wrong box); a refused attempt records nothing.
 */
export async function operatorSignIn(
  deps: SessionDeps,
  email: string,
  password: string,
  ip: string | null,
): Promise<{ token: string; operator: Operator }> {
  const operator = await checkPassword(deps, "operator", deps.store.operators, { email, password, ip }, (known) =>
    sessionEntry(deps, known ? byOperator(known, ip) : { actor: UNKNOWN_OPERATOR, ip }, "session.failed"),
  );
  return { token: await openOperatorSession(deps, operator, byOperator(operator, ip)), operator };
}

/** A new session of an operator whose password was checked, recorded as `session.create` by `by`; returns the cookie value. */
export async function openOperatorSession(deps: SessionDeps, operator: Operator, by: AuditContext): Promise<string> {
  const now = deps.clock.now();
  const { token, tokenHash } = newSessionToken(deps.random);
  const session: OperatorSession = {
    tokenHash,
    operatorId: operator.id,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
  };
  await deps.store.operators.createSession(session, sessionEntry(deps, by, "session.create"));
  return token;
}

/** The operator signed in with a cookie value, or null (no session, expired, or the operator deleted). */
export async function findOperator(deps: SessionDeps, token: string | undefined): Promise<Operator | null> {
  if (!token) return null;
  const session = await deps.store.operators.findSession(hashToken(token));
  if (!session || session.expiresAt <= deps.clock.now()) return null;
  return (await deps.store.operators.byId(session.operatorId)) ?? null;
}

/** Ends the session behind a cookie value, recorded as `session.delete` when there was one. */
export async function operatorSignOut(deps: SessionDeps, token: string | undefined, ip: string | null): Promise<void> {
  if (!token) return;
  const tokenHash = hashToken(token);
  const session = await deps.store.operators.findSession(tokenHash);
  const operator = session && (await deps.store.operators.byId(session.operatorId));
  if (!operator) return deps.store.operators.deleteSession(tokenHash);
  await deps.store.operators.deleteSession(tokenHash, sessionEntry(deps, byOperator(operator, ip), "session.delete"));
}
