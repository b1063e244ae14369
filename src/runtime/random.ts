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

function encodeId(prefix: string, bytes: Uint8Array, start: number, length: number): string {
  let out = "";
  for (let i = start; i < start + length; i++) out += ALPHABET[bytes[i]! % ALPHABET.length];
  return `${prefix}_${out}`;
}

/** `prefix_` followed by `length` base-36 characters; 16 characters carry about 82 bits. */
export function randomId(random: Random, prefix: string, length = 16): string {
  return encodeId(prefix, random.bytes(length), 0, length);
}

/**
 * Ids like randomId's, drawing random bytes in batches: for ids minted on every proxied request.
 * A batch is encoded into one string at once; each id is then a slice of it (no per-character work).
 */
export function idSource(random: Random, prefix: string, length = 16, batch = 256): () => string {
  let pool = "";
  let at = 0;
  return () => {
    if (at + length > pool.length) {
      const bytes = random.bytes(length * batch);
      for (let i = 0; i < bytes.length; i++) bytes[i] = ALPHABET.charCodeAt(bytes[i]! % ALPHABET.length);
      pool = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("latin1");
      at = 0;
    }
    at += length;
    return `${prefix}_${pool.slice(at - length, at)}`;
  };
}
