import { randomBytes } from "node:crypto";

/** Source of randomness for ids, keys and secrets; injectable so tests can make it repeatable. */
export interface Random {
  bytes(length: number): Uint8Array;
}

export const cryptoRandom: Random = { bytes: (length) => new Uint8Array(randomBytes(length)) };

/** Deterministic (NOT cryptographic) bytes for tests: a seeded xorshift stream. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0 || 1;
  return {
    bytes(length) {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        out[i] = state & 0xff;
      }
      return out;
    },
  };
}

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** `prefix_` followed by `length` base-36 characters; 16 characters carry about 82 bits. */
export function randomId(random: Random, prefix: string, length = 16): string {
  const bytes = random.bytes(length);
  let out = "";
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return `${prefix}_${out}`;
}
