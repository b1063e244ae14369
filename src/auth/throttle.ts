import { createHash } from "node:crypto";
import { AppError } from "../errors/catalog.ts";
import { parseAddress } from "../ip/cidr.ts";
import { formatIp } from "../ip/ip.ts";
import type { AttemptCounter, SignInCountStore } from "../store/sign-in-counts.ts";

/**
 * Sign-in throttling (CONTRACT 8, docs/operations.md#sign-in-throttling). Each attempt is counted
 * before its password is checked, on two counters at once: its email from its client address, and
 * its client address across every email (a spray of one guess per email). Past either, the
 * attempt is refused with 429 and Retry-After whatever the password, and its password is not
 * checked. A right password forgets its email's count from that address and gives its attempt
 * back to the address's. The counts of the dashboard's door and the console's are kept apart.
 */

/** How long counted attempts are remembered. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/**
 * Wrong passwords for one email from one client address per window; the window restarts at each
 * one, so no window's span ever holds more.
 */
export const WRONG_PASSWORDS_PER_EMAIL = 5;
/**
 * Wrong passwords from one client address across every email, in windows that begin at the first:
 * room for an office behind one address, not for guessing at many accounts.
 */
export const WRONG_PASSWORDS_PER_ADDRESS = 20;

export type SignInDoor = "user" | "operator";

/**
 * The part of a client's address counted: an IPv4 address, or an IPv6 address's /64, since one
 * client holds a whole /64 and could otherwise take a fresh address for each guess.
 */
export function countedAddress(ip: string | null): string {
  const parsed = ip === null ? null : parseAddress(ip);
  if (!parsed) return ip ?? "none";
  if (parsed.family === 4) return formatIp(parsed);
  const network = new Uint8Array(16);
  network.set(parsed.bytes.subarray(0, 8));
  return `${formatIp({ family: 6, bytes: network })}/64`;
}

/** Counters are kept by hash: the table holds neither emails (a password typed in the wrong box) nor addresses. */
const hashed = (...parts: string[]) => createHash("sha256").update(parts.join("\n")).digest("hex");

/** An attempt being checked: what it holds, to give back when the password is right. */
export interface HeldAttempt {
  emailKey: string;
  addressKey: string;
  addressSince: number;
}

/** Counts an attempt before its password is checked; 429 `too_many_attempts` with Retry-After when it may not be made. */
export async function holdAttempt(
  counts: SignInCountStore,
  door: SignInDoor,
  email: string,
  ip: string | null,
  now: number,
): Promise<HeldAttempt> {
  const address = countedAddress(ip);
  const emailKey = hashed(door, "email", email.trim().toLowerCase(), address);
  const addressKey = hashed(door, "address", address);
  const counters: AttemptCounter[] = [
    { key: emailKey, limit: WRONG_PASSWORDS_PER_EMAIL, sliding: true },
    { key: addressKey, limit: WRONG_PASSWORDS_PER_ADDRESS, sliding: false },
  ];
  const held = await counts.reserve(counters, now, SIGN_IN_WINDOW_MS);
  if (!held.held) {
    const wait = Math.max(1, Math.ceil((held.retryAt - now) / 1000));
    throw new AppError("too_many_attempts", `Too many failed sign-ins; try again in ${wait} s.`, {
      "retry-after": String(wait),
    });
  }
  return { emailKey, addressKey, addressSince: held.since[1] ?? now };
}

/** A right password: its email's count from that address is forgotten, and its attempt given back to the address. */
export async function releaseAttempt(counts: SignInCountStore, attempt: HeldAttempt): Promise<void> {
  await counts.forget(attempt.emailKey);
  await counts.giveBack(attempt.addressKey, attempt.addressSince);
}
