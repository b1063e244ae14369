import { createHash } from "node:crypto";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import type { Random } from "../runtime/random.ts";
import type { AuditEntry } from "../store/audit.ts";
import { holdAttempt, releaseAttempt, type SignInDoor } from "./throttle.ts";

/**
 * What account users' and operators' sign-ins share: the password check, its throttling
 * (src/auth/throttle.ts), and the session token. Each kind keeps its own people, failures and sessions (src/auth/session.ts,
 * src/operators/session.ts), so a session of one kind never opens the other's pages.
 */

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
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

/** The people of one kind, as a sign-in reads them. */
export interface People<P extends { passwordHash: string }> {
  byEmail(email: string): Promise<P | undefined>;
}

/**
 * Checks an email and password against `people` of `door`, from client address `ip`: the attempt
 * is counted first (src/auth/throttle.ts: 429 when it may not be made, the password unchecked and
 * nothing recorded), then 401 for an unknown email or a wrong password (alike, in time too) with
 * the `session.failed` entry `failed` makes of the person of that email (if any), and the person
 * otherwise, whose attempt is given back.
 */
export async function checkPassword<P extends { passwordHash: string }>(
  deps: Pick<Deps, "clock" | "store">,
  door: SignInDoor,
  people: People<P>,
  attempt: { email: string; password: string; ip: string | null },
  failed: (person: P | undefined) => AuditEntry,
): Promise<P> {
  const { email, password, ip } = attempt;
  const held = await holdAttempt(deps.store.signIns, door, email, ip, deps.clock.now());
  const person = await people.byEmail(email);
  const ok = await Bun.password.verify(password, person?.passwordHash ?? UNKNOWN_PERSON_HASH);
  if (!person || !ok) {
    // The attempt stays counted, whether or not its entry can be written.
    await deps.store.audit.record(failed(person));
    throw new AppError("unauthorized", "Wrong email or password.");
  }
  await releaseAttempt(deps.store.signIns, held);
  return person;
}
