import { auditEntry, byUser, type AuditContext } from "../audit/entry.ts";
import type { Deps } from "../deps.ts";
import type { Session } from "../store/types.ts";
import { checkPassword, hashToken, newSessionToken, SESSION_TTL_MS } from "./sign-in.ts";

export const SESSION_COOKIE = "sb_session";

type SessionDeps = Pick<Deps, "store" | "clock" | "random">;

/** Who a failed sign-in names: the user of that email, or nobody known (the email itself is not kept: it may be a password typed in the wrong box). */
const UNKNOWN_USER = { id: "unknown", email: null } as const;

/**
 * Checks the password (throttled: src/auth/throttle.ts) and opens a session; returns the cookie
 * value. A wrong password is recorded (`session.failed`, in its account when the email is a
 * user's); a refused attempt records nothing.
 */
export async function signIn(
  deps: SessionDeps,
  email: string,
  password: string,
  ip: string | null,
): Promise<{ token: string; session: Session }> {
  const user = await checkPassword(deps, "user", deps.store.users, { email, password, ip }, (user) => {
    const who = user ? { id: user.id, email: user.email } : UNKNOWN_USER;
    const by: AuditContext = { actor: { kind: "user", ...who }, ip };
    return auditEntry(deps, by, "session.failed", { kind: "user", id: who.id }, user?.accountId ?? null);
  });
  return openSession(deps, user, byUser(user, ip));
}

/** A new session of a user whose password was checked, recorded as `session.create` by `by`; returns the cookie value. */
export async function openSession(
  deps: SessionDeps,
  user: { id: string; accountId: string },
  by: AuditContext,
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
  const entry = auditEntry(deps, by, "session.create", { kind: "user", id: user.id }, user.accountId);
  await deps.store.sessions.create(session, entry);
  return { token, session };
}

/** The live session behind a cookie value, or null. */
export async function findSession(deps: SessionDeps, token: string | undefined): Promise<Session | null> {
  if (!token) return null;
  const session = await deps.store.sessions.find(hashToken(token));
  if (!session || session.expiresAt <= deps.clock.now()) return null;
  return session;
}

/** Ends the session behind a cookie value, recorded as `session.delete` when there was one. */
export async function signOut(deps: SessionDeps, token: string | undefined, ip: string | null): Promise<void> {
  if (!token) return;
  const tokenHash = hashToken(token);
  const session = await deps.store.sessions.find(tokenHash);
  const user = session && (await deps.store.users.byId(session.userId));
  if (!session || !user) return deps.store.sessions.delete(tokenHash);
  const entry = auditEntry(deps, byUser(user, ip), "session.delete", { kind: "user", id: user.id }, user.accountId);
  await deps.store.sessions.delete(tokenHash, entry);
}
