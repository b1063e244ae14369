/** Source of randomness for ids, keys and secrets; injectable so tests can make it repeatable. */
export interface Random {
  /** A fresh array the caller owns (ids are encoded over it in place). */
  bytes(length: number): Uint8Array;
}

/** getRandomValues fills at most this many bytes per call. */
const MAX_RANDOM_FILL = 65_536;

// getRandomValues fills the array in place. node's randomBytes allocates a Buffer to copy from:
// a 15-byte id took 0.7 µs that way against 0.09 µs, and the relay mints two ids per delivery.
export const cryptoRandom: Random = {
  bytes: (length) => {
    const out = new Uint8Array(length);
    if (length <= MAX_RANDOM_FILL) crypto.getRandomValues(out);
    else
      for (let at = 0; at < length; at += MAX_RANDOM_FILL)
        crypto.getRandomValues(out.subarray(at, at + MAX_RANDOM_FILL));
    return out;
  },
};

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

/** The encoded bytes are ASCII, which latin1 reads one byte to one character. */
const latin1 = new TextDecoder("latin1");

/**
 * Base-36 text of random bytes, written over the bytes themselves and read as one string: adding
 * a character at a time made a string per character, and the relay mints ten ids per event.
 */
function encode(bytes: Uint8Array): string {
  // An index loop (entries() is ten times slower here); `?? 0` only satisfies the type, i < length.
  for (let i = 0; i < bytes.length; i++) bytes[i] = ALPHABET.charCodeAt((bytes[i] ?? 0) % ALPHABET.length);
  return latin1.decode(bytes);
}

/** `prefix_` followed by `length` base-36 characters; 16 characters carry about 82 bits. */
export function randomId(random: Random, prefix: string, length = 16): string {
  return `${prefix}_${encode(random.bytes(length))}`;
}

/** Base-36 digits of the time part of timeOrderedId: epoch ms stay 9 digits until the year 5188. */
const TIME_DIGITS = 9;

/**
 * Like randomId (same length), but its first 9 characters are `now` (epoch ms) in fixed-width
 * base 36, so ids sort by creation time. For rows written at a high rate: a B-tree index on
 * random ids changes one random page per insert and every such page is written at commit, while
 * time-ordered ids fill the same few pages at one end of the index (bench/RESULTS.md, webhook relay).
 */
export function timeOrderedId(random: Random, prefix: string, now: number, length = 24): string {
  const time = Math.max(0, Math.floor(now)).toString(36).padStart(TIME_DIGITS, "0");
  return `${prefix}_${time}${encode(random.bytes(length - TIME_DIGITS))}`;
}

/** Random base-36 text drawn from `random` in batches of `batch` pieces, `length` characters a piece. */
function randomPieces(random: Random, length: number, batch: number): () => string {
  let pool = "";
  let at = 0;
  return () => {
    if (at + length > pool.length) {
      pool = encode(random.bytes(length * batch));
      at = 0;
    }
    at += length;
    return pool.slice(at - length, at);
  };
}

/**
 * Ids like randomId's, drawing random bytes in batches: for ids minted at a high rate.
 * A batch is encoded into one string at once; each id is then a slice of it (no per-character work).
 */
export function idSource(random: Random, prefix: string, length = 16, batch = 256): () => string {
  const piece = randomPieces(random, length, batch);
  return () => `${prefix}_${piece()}`;
}

/**
 * timeOrderedId's ids drawn as idSource's, for ids minted on every proxied request (the request
 * log's rows are keyed by them). The time part is made once per millisecond.
 */
export function timeOrderedIdSource(random: Random, prefix: string, length = 20, batch = 256): (now: number) => string {
  const piece = randomPieces(random, length - TIME_DIGITS, batch);
  let last = -1;
  let head = "";
  return (now) => {
    const ms = Math.max(0, Math.floor(now));
    if (ms !== last) {
      last = ms;
      head = `${prefix}_${ms.toString(36).padStart(TIME_DIGITS, "0")}`;
    }
    return head + piece();
  };
}
