import { createHash } from "node:crypto";
import { AppError } from "../errors/catalog.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Random } from "../runtime/random.ts";
import type { AuditEntry } from "../store/audit.ts";
import type { SignInFailures } from "../store/sign-in-failures.ts";

/**
 * What account users' and operators' sign-ins share: the password check, its throttling by email,
 * and the session token. Each kind keeps its own people, failures and sessions (src/auth/session.ts,
 * src/operators/session.ts), so a session of one kind never opens the other's pages.
 */

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
const UNKNOWN_PERSON_HASH =
  "$argon2id$v=19$m=65536,t=2,p=1$p+6kEW439luP1UeHC7UwpZ4wCWz5Tg0jh7zSM+xor/A$BksyOll41xbwHL/uT4qurV1txqyfu8okrkTEWPUc47g";

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** A new session's cookie value (32 random bytes) and the hash that is stored in its place. */
export function newSessionToken(random: Random): { token: string; tokenHash: string } {
  const token = Buffer.from(random.bytes(32)).toString("base64url");
  return { token, tokenHash: hashToken(token) };
}

/** How long a sign-in for this email must still wait, in ms (0 = may try now). */
export function signInLockRemaining(failures: { count: number; lastAt: number } | undefined, now: number): number {
  if (!failures || failures.count < FREE_FAILURES || now - failures.lastAt >= FAILURE_MEMORY_MS) return 0;
  const lock = Math.min(1000 * 2 ** (failures.count - FREE_FAILURES), MAX_LOCK_MS);
  return Math.max(0, failures.lastAt + lock - now);
}

/** The people of one kind, as a sign-in reads them. */
export interface People<P extends { passwordHash: string }> extends SignInFailures {
  byEmail(email: string): Promise<P | undefined>;
}

/**
 * Checks an email and password against `people`: 429 while the email's failures lock it (nothing
 * recorded), 401 for an unknown email or a wrong password (alike, in time too), the failure counted
 * with the `session.failed` entry `failed` makes of the person of that email (if any), and the
 * person otherwise.
 */
export async function checkPassword<P extends { passwordHash: string }>(
  clock: Clock,
  people: People<P>,
  email: string,
  password: string,
  failed: (person: P | undefined) => AuditEntry,
): Promise<P> {
  const now = clock.now();
  const failures = await people.failures(email);
  // Forgotten, though the retention purge (src/retention/) may not have deleted them yet: a new
  // failure counts from one again.
  if (failures && now - failures.lastAt >= FAILURE_MEMORY_MS) await people.clearFailures(email);
  const wait = signInLockRemaining(failures, now);
  if (wait > 0)
    throw new AppError("too_many_attempts", `Too many failed sign-ins; try again in ${Math.ceil(wait / 1000)} s.`);
  const person = await people.byEmail(email);
  const ok = await Bun.password.verify(password, person?.passwordHash ?? UNKNOWN_PERSON_HASH);
  if (!person || !ok) {
    await people.recordFailure(email, now, failed(person));
    throw new AppError("unauthorized", "Wrong email or password.");
  }
  await people.clearFailures(email);
  return person;
}
