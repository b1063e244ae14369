import type { Random } from "../runtime/random.ts";
import type { KeyMode } from "../store/types.ts";

const KEY_PATTERN = /^px_(live|test)_[A-Za-z0-9_-]{32}$/;

/** A new API key: `px_live_` or `px_test_` and 32 characters of base64url (24 random bytes). */
export function generateApiKey(random: Random, mode: KeyMode): string {
  return `px_${mode}_${Buffer.from(random.bytes(24)).toString("base64url")}`;
}

/** The mode of a well-formed key, or null for anything else. */
export function apiKeyMode(key: string): KeyMode | null {
  const match = KEY_PATTERN.exec(key);
  return match ? (match[1] as KeyMode) : null;
}

/**
 * Keys carry 192 random bits, so a fast hash is enough to make a stolen table useless;
 * a slow password hash would only cost time on every proxied request. (Bun's one-shot SHA-256 is
 * about three times cheaper than node:crypto's createHash, and this runs on every proxied call.)
 */
export function hashApiKey(key: string): string {
  return Bun.SHA256.hash(key, "hex");
}

/** What the dashboard shows of a key: its prefix and the first four characters of the secret part. */
export function displayPrefix(key: string): string {
  return key.slice(0, "px_live_".length + 4);
}
