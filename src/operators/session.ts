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

/** Checks the password (throttled as the dashboard's sign-in is) and opens an operator session; returns the cookie value. */
export async function operatorSignIn(
  deps: SessionDeps,
  email: string,
  password: string,
): Promise<{ token: string; operator: Operator }> {
  const operator = await checkPassword(deps.clock, deps.store.operators, email, password);
  return { token: await openOperatorSession(deps, operator), operator };
}

/** A new session of an operator whose password was checked; returns the cookie value. */
export async function openOperatorSession(deps: SessionDeps, operator: Operator): Promise<string> {
  const now = deps.clock.now();
  const { token, tokenHash } = newSessionToken(deps.random);
  const session: OperatorSession = {
    tokenHash,
    operatorId: operator.id,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
  };
  await deps.store.operators.createSession(session);
  return token;
}

/** The operator signed in with a cookie value, or null (no session, expired, or the operator deleted). */
export async function findOperator(deps: SessionDeps, token: string | undefined): Promise<Operator | null> {
  if (!token) return null;
  const session = await deps.store.operators.findSession(hashToken(token));
  if (!session || session.expiresAt <= deps.clock.now()) return null;
  return (await deps.store.operators.byId(session.operatorId)) ?? null;
}

export async function operatorSignOut(deps: SessionDeps, token: string | undefined): Promise<void> {
  if (token) await deps.store.operators.deleteSession(hashToken(token));
}
