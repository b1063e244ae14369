import { MAX_INTEGER_COLUMN } from "../http/whole-number.ts";
import { scanBody } from "./scanner.ts";

/** One change of an entry, as far as routing needs it. */
export interface EventChange {
  field: string;
  /** `value.metadata.phone_number_id`, when the change carries one. */
  phoneNumberId: string | null;
  /** The messages a `messages` change is about: its statuses and its inbound messages (for a message's timeline). */
  messages: MessageMention[];
}

/** A message id an event mentions: a status of a sent message, or a message received. */
export interface MessageMention {
  messageId: string;
  kind: "status" | "inbound";
  /** `sent`, `delivered`, `read`, `failed`…, for a status. */
  status: string | null;
  /** A failed status's first `errors[].code`. */
  errorCode: number | null;
}

/** The longest message id a lookup takes (GET /api/messages/{message_id}, ?message_id=). */
const MAX_MENTION_CHARS = 300;

/**
 * A value the index of mentions can hold: text without NUL (PostgreSQL's text refuses it) and no
 * longer than a lookup takes; an integer of its columns. Anything else is not indexed: the event
 * is still relayed byte for byte.
 */
const indexable = (v: unknown): v is string =>
  typeof v === "string" && v.length <= MAX_MENTION_CHARS && !v.includes("\u0000");
const indexableCode = (v: unknown): v is number => Number.isInteger(v) && Math.abs(v as number) <= MAX_INTEGER_COLUMN;

/** A status of a sent message, with its first error's code; null when it names no message we can index. */
function statusMention(s: unknown): MessageMention | null {
  if (!isObject(s) || !indexable(s.id)) return null;
  const code = Array.isArray(s.errors) && isObject(s.errors[0]) ? s.errors[0].code : null;
  return {
    messageId: s.id,
    kind: "status",
    status: indexable(s.status) ? s.status : null,
    errorCode: indexableCode(code) ? code : null,
  };
}

/** What a `messages` change's value says of message ids, read from the parsed value (nothing is re-encoded). */
function mentions(field: string, value: Record<string, unknown>): MessageMention[] {
  if (field !== "messages") return [];
  const out: MessageMention[] = [];
  for (const s of Array.isArray(value.statuses) ? value.statuses : []) {
    const mention = statusMention(s);
    if (mention) out.push(mention);
  }
  for (const m of Array.isArray(value.messages) ? value.messages : []) {
    if (isObject(m) && indexable(m.id)) out.push({ messageId: m.id, kind: "inbound", status: null, errorCode: null });
  }
  return out;
}

export interface EventEntry {
  wabaId: string;
  changes: EventChange[];
  /** [start, end) of this entry's bytes in the raw body. */
  range: [number, number];
}

/** An upstream event: its raw bytes, and what routing needs from them. */
export interface UpstreamEvent {
  bytes: Uint8Array;
  objectRange: [number, number];
  entries: EventEntry[];
}

export type ParseResult = { ok: true; event: UpstreamEvent } | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** One entry of the event with what routing needs of its changes, or what is wrong with it. */
function readEntry(entry: unknown, i: number, range: [number, number]): EventEntry | string {
  if (!isObject(entry) || typeof entry.id !== "string" || !Array.isArray(entry.changes)) {
    return `entry[${i}] needs a string \`id\` and a \`changes\` array`;
  }
  const changes: EventChange[] = [];
  for (const [j, change] of (entry.changes as unknown[]).entries()) {
    if (!isObject(change) || typeof change.field !== "string" || !isObject(change.value)) {
      return `entry[${i}].changes[${j}] needs a string \`field\` and an object \`value\``;
    }
    const metadata = change.value.metadata;
    const phone = isObject(metadata) && indexable(metadata.phone_number_id) ? metadata.phone_number_id : null;
    changes.push({ field: change.field, phoneNumberId: phone, messages: mentions(change.field, change.value) });
  }
  return { wabaId: entry.id, changes, range };
}

/**
 * Checks the docs/webhooks.md#the-payload shape ({object, entry: [{id, changes: [{field, value}]}]}) with JSON.parse,
 * and finds each entry's byte range with the scanner. The parsed values are only read, never
 * serialised again.
 */
export function parseEvent(bytes: Uint8Array): ParseResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(bytes));
  } catch {
    return { ok: false, reason: "the body is not UTF-8 JSON" };
  }
  if (!isObject(parsed)) return { ok: false, reason: "the body is not a JSON object" };
  if (typeof parsed.object !== "string") return { ok: false, reason: "`object` is not a string" };
  if (!Array.isArray(parsed.entry)) return { ok: false, reason: "`entry` is not an array" };
  const ranges = scanBody(bytes);
  if (ranges.object === null || ranges.entries.length !== parsed.entry.length) {
    return { ok: false, reason: "the body's structure could not be scanned" };
  }
  const entries: EventEntry[] = [];
  for (const [i, range] of ranges.entries.entries()) {
    const entry = readEntry((parsed.entry as unknown[])[i], i, range);
    if (typeof entry === "string") return { ok: false, reason: entry };
    entries.push(entry);
  }
  return { ok: true, event: { bytes, objectRange: ranges.object, entries } };
}

const OPEN = new TextEncoder().encode('{"object":');
const MIDDLE = new TextEncoder().encode(',"entry":[');
const CLOSE = new TextEncoder().encode("]}");

/**
 * A body holding only some entries: the service writes the wrapper, and copies `object`'s value
 * and each entry byte for byte, in upstream order.
 */
export function wrapEntries(event: UpstreamEvent, entries: EventEntry[]): Uint8Array<ArrayBuffer> {
  const { bytes } = event;
  const objectBytes = bytes.subarray(event.objectRange[0], event.objectRange[1]);
  let size = OPEN.length + objectBytes.length + MIDDLE.length + CLOSE.length + Math.max(0, entries.length - 1);
  for (const e of entries) size += e.range[1] - e.range[0];
  const out = new Uint8Array(size);
  let at = 0;
  const put = (part: Uint8Array) => {
    out.set(part, at);
    at += part.length;
  };
  put(OPEN);
  put(objectBytes);
  put(MIDDLE);
  entries.forEach((e, i) => {
    if (i > 0) out[at++] = 0x2c;
    put(bytes.subarray(e.range[0], e.range[1]));
  });
  put(CLOSE);
  return out;
}
