import type { EventEntry, UpstreamEvent } from "./event.ts";
import { scanEntry } from "./scanner.ts";

/**
 * Bodies for `signature: "platform"` endpoints (docs/webhooks.md#signature-schemes): the platform's
 * own shape with one entry holding one change, each part copied byte for byte from the upstream
 * body; only characters outside U+0000–U+007E are written as `\uXXXX` escapes, as the platform
 * writes them, so that a receiver which re-escapes the body before checking its signature (as
 * whatsapp-api-js does) computes it over the very bytes sent.
 */

const encoder = new TextEncoder();
const OPEN = encoder.encode('{"object":');
const ENTRY = encoder.encode(',"entry":[{"id":');
const CHANGES = encoder.encode(',"changes":[');
const CLOSE = encoder.encode("]}]}");
const HEX = "0123456789abcdef";
const LAST_KEPT = 0x7e;

/** The length of the UTF-8 sequence a lead byte starts. */
const sequenceLength = (b: number) => (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2);

/** `\uXXXX` (lowercase hex) of one UTF-16 code unit, written at `at`. */
function putEscape(out: Uint8Array, at: number, unit: number): number {
  out[at] = 0x5c;
  out[at + 1] = 0x75;
  for (let i = 0; i < 4; i++) out[at + 2 + i] = HEX.charCodeAt((unit >> (12 - 4 * i)) & 0xf);
  return at + 6;
}

/** How many bytes escaping every character outside U+0000–U+007E adds. */
function escapedExtra(bytes: Uint8Array): number {
  let extra = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b <= LAST_KEPT) continue;
    if (b === 0x7f) {
      extra += 5;
      continue;
    }
    const n = sequenceLength(b);
    // Each escape is 6 bytes per UTF-16 unit: 2 units (12 bytes) for a 4-byte sequence.
    extra += (n === 4 ? 12 : 6) - n;
    i += n - 1;
  }
  return extra;
}

/** The code point of the `n`-byte UTF-8 sequence at `i`. */
function codePointAt(bytes: Uint8Array, i: number, n: number): number {
  let cp = (bytes[i] as number) & (n === 2 ? 0x1f : n === 3 ? 0x0f : 0x07);
  for (let k = 1; k < n; k++) cp = (cp << 6) | ((bytes[i + k] as number) & 0x3f);
  return cp;
}

/** A code point as one `\uXXXX`, or two (a surrogate pair) above U+FFFF, written at `at`. */
function putCodePoint(out: Uint8Array, at: number, cp: number): number {
  if (cp < 0x10000) return putEscape(out, at, cp);
  const v = cp - 0x10000;
  return putEscape(out, putEscape(out, at, 0xd800 | (v >> 10)), 0xdc00 | (v & 0x3ff));
}

/**
 * `bytes` (valid UTF-8 JSON) with every character outside U+0000–U+007E escaped; the same array
 * when there is none. Such characters only occur inside strings, where an escape means the same.
 */
export function escapeNonAscii(bytes: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const extra = escapedExtra(bytes);
  if (extra === 0) return bytes;
  const out = new Uint8Array(bytes.length + extra);
  let at = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b <= LAST_KEPT) out[at++] = b;
    else if (b === 0x7f) at = putEscape(out, at, b);
    else {
      const n = sequenceLength(b);
      at = putCodePoint(out, at, codePointAt(bytes, i, n));
      i += n - 1;
    }
  }
  return out;
}

/** One body per change of `entry`, in upstream order: `{"object":…,"entry":[{"id":…,"changes":[<change>]}]}`. */
export function oneChangeBodies(event: UpstreamEvent, entry: EventEntry): Uint8Array<ArrayBuffer>[] {
  const { bytes } = event;
  const ranges = scanEntry(bytes, entry.range);
  if (ranges.id === null || ranges.changes.length !== entry.changes.length) {
    // parseEvent checked the entry with JSON.parse: the scanner reads the same structure.
    throw new Error(`entry ${entry.wabaId} could not be split into its changes`);
  }
  const object = bytes.subarray(event.objectRange[0], event.objectRange[1]);
  const id = bytes.subarray(ranges.id[0], ranges.id[1]);
  return ranges.changes.map(([start, end]) => {
    const out = new Uint8Array(
      OPEN.length + object.length + ENTRY.length + id.length + CHANGES.length + (end - start) + CLOSE.length,
    );
    let at = 0;
    for (const part of [OPEN, object, ENTRY, id, CHANGES, bytes.subarray(start, end), CLOSE]) {
      out.set(part, at);
      at += part.length;
    }
    return escapeNonAscii(out);
  });
}
