import { createHash } from "node:crypto";
import { auditEntry, byUser, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import type { Session } from "../store/types.ts";

export const SESSION_COOKIE = "sb_session";
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Failed sign-ins allowed before each further try must wait, doubling up to the cap. */
const FREE_FAILURES = 5;
const MAX_LOCK_MS = 15 * 60 * 1000;
/** Failures older than this are forgotten, so last month's typos never lock anyone out. */
export const FAILURE_MEMORY_MS = 24 * 60 * 60 * 1000;
/**
 * An argon2id hash of a random password nobody knows. Checking a password against it when the
 * email is unknown costs the same time as a real check, so timing does not reveal which emails exist.
 */
const UNKNOWN_USER_HASH =
  "$argon2id$v=19$m=65536,t=2,p=1$p+6kEW439luP1UeHC7UwpZ4wCWz5Tg0jh7zSM+xor/A$BksyOll41xbwHL/uT4qurV1txqyfu8okrkTEWPUc47g";

type SessionDeps = Pick<Deps, "store" | "clock" | "random">;

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** How long a sign-in for this email must still wait, in ms (0 = may try now). */
export function signInLockRemaining(failures: { count: number; lastAt: number } | undefined, now: number): number {
  if (!failures || failures.count < FREE_FAILURES || now - failures.lastAt >= FAILURE_MEMORY_MS) return 0;
  const lock = Math.min(1000 * 2 ** (failures.count - FREE_FAILURES), MAX_LOCK_MS);
  return Math.max(0, failures.lastAt + lock - now);
}

/** Who a failed sign-in names: the user of that email, or nobody known (the email itself is not kept: it may be a password typed in the wrong box). */
const UNKNOWN_USER = { id: "unknown", email: null } as const;

/**
 * Checks the password and opens a session; returns the cookie value. A wrong password is recorded
 * (`session.failed`, in its account when the email is a user's) with the failure it counts; a
 * refusal while locked changes nothing and records nothing.
 */
export async function signIn(
  deps: SessionDeps,
  email: string,
  password: string,
  ip: string | null,
): Promise<{ token: string; session: Session }> {
  const now = deps.clock.now();
  const failures = await deps.store.users.failures(email);
  // Forgotten, though the retention purge (src/retention/) may not have deleted them yet: a new
  // failure counts from one again.
  if (failures && now - failures.lastAt >= FAILURE_MEMORY_MS) await deps.store.users.clearFailures(email);
  const wait = signInLockRemaining(failures, now);
  if (wait > 0)
    throw new AppError("too_many_attempts", `Too many failed sign-ins; try again in ${Math.ceil(wait / 1000)} s.`);
  const user = await deps.store.users.byEmail(email);
  const ok = await Bun.password.verify(password, user?.passwordHash ?? UNKNOWN_USER_HASH);
  if (!user || !ok) {
    const who = user ? { id: user.id, email: user.email } : UNKNOWN_USER;
    const by: AuditContext = { actor: { kind: "user", ...who }, ip };
    const object = { kind: "user", id: by.actor.id };
    const entry = auditEntry(deps, by, "session.failed", object, user?.accountId ?? null);
    await deps.store.users.recordFailure(email, now, entry);
    throw new AppError("unauthorized", "Wrong email or password.");
  }
  await deps.store.users.clearFailures(email);
  return openSession(deps, user, byUser(user, ip));
}

/** A new session of a user whose password was checked, recorded as `session.create` by `by`; returns the cookie value. */
export async function openSession(
  deps: SessionDeps,
  user: { id: string; accountId: string },
  by: AuditContext,
): Promise<{ token: string; session: Session }> {
  const now = deps.clock.now();
  const token = Buffer.from(deps.random.bytes(32)).toString("base64url");
  const session: Session = {
    tokenHash: hashToken(token),
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
