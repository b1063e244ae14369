import type { Deps } from "../deps.ts";
import type { Session } from "../store/types.ts";
import { checkPassword, hashToken, newSessionToken, SESSION_TTL_MS } from "./sign-in.ts";

export const SESSION_COOKIE = "sb_session";

type SessionDeps = Pick<Deps, "store" | "clock" | "random">;

/** Checks the password and opens a session; returns the cookie value. */
export async function signIn(
  deps: SessionDeps,
  email: string,
  password: string,
): Promise<{ token: string; session: Session }> {
  return openSession(deps, await checkPassword(deps.clock, deps.store.users, email, password));
}

/** A new session of a user whose password was checked; returns the cookie value. */
export async function openSession(
  deps: SessionDeps,
  user: { id: string; accountId: string },
): Promise<{ token: string; session: Session }> {
  const now = deps.clock.now();
  const { token, tokenHash } = newSessionToken(deps.random);
  const session: Session = {
    tokenHash,
    userId: user.id,
    accountId: user.accountId,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
  };
  await deps.store.sessions.create(session);
  return { token, session };
}

/** The live session behind a cookie value, or null. */
export async function findSession(deps: SessionDeps, token: string | undefined): Promise<Session | null> {
  if (!token) return null;
  const session = await deps.store.sessions.find(hashToken(token));
  if (!session || session.expiresAt <= deps.clock.now()) return null;
  return session;
}

export async function signOut(deps: SessionDeps, token: string | undefined): Promise<void> {
  if (token) await deps.store.sessions.delete(hashToken(token));
}
