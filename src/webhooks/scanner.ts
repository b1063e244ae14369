import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from "../http/json-bytes.ts";

/**
 * Finds byte ranges in a raw JSON webhook body without re-encoding anything (docs/webhooks.md#the-payload): the raw
 * value of the top-level `object` member and of each element of the top-level `entry` array.
 * The caller has already checked that the text is valid JSON (JSON.parse), so this scanner only
 * tracks structure. It works on UTF-8 bytes: every byte of a multi-byte character is >= 0x80, so
 * it can never be mistaken for a quote, bracket or comma.
 */
export interface BodyRanges {
  /** [start, end) of the `object` member's value, or null when there is none. */
  object: [number, number] | null;
  /** [start, end) of each element of `entry`, in order. */
  entries: [number, number][];
}

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

class Cursor {
  constructor(
    readonly bytes: Uint8Array,
    public at = 0,
  ) {}
  skipSpace(): void {
    while (isSpace(this.bytes[this.at])) this.at++;
  }
  expect(byte: number): void {
    this.skipSpace();
    if (this.bytes[this.at] !== byte) throw new Error(`expected '${String.fromCharCode(byte)}' at byte ${this.at}`);
    this.at++;
  }
  /** Skips a string starting at the current quote; returns its [start, end) including quotes. */
  string(): [number, number] {
    const start = this.at;
    this.at++;
    for (;;) {
      const b = this.bytes[this.at++];
      if (b === undefined) throw new Error("unterminated string");
      if (b === BACKSLASH) this.at++;
      else if (b === QUOTE) return [start, this.at];
    }
  }
  /** Skips any value; returns its [start, end). */
  value(): [number, number] {
    this.skipSpace();
    const first = this.bytes[this.at];
    if (first === QUOTE) return this.string();
    if (first === OPEN_OBJECT || first === OPEN_ARRAY) return this.container();
    return this.scalar();
  }
  /** Skips an object or array starting at the cursor, strings in it included; returns its [start, end). */
  private container(): [number, number] {
    const start = this.at;
    let depth = 0;
    for (let b = this.bytes[this.at]; b !== undefined; b = this.bytes[this.at]) {
      if (b === QUOTE) {
        this.string();
        continue;
      }
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
      this.at++;
      if (depth === 0) return [start, this.at];
    }
    throw new Error("unterminated container");
  }
  /** Skips a number, true, false or null: it runs until a delimiter or the end. */
  private scalar(): [number, number] {
    const start = this.at;
    for (let b = this.bytes[this.at]; b !== undefined; b = this.bytes[this.at]) {
      if (b === COMMA || b === CLOSE_OBJECT || b === CLOSE_ARRAY || isSpace(b)) break;
      this.at++;
    }
    if (this.at === start) throw new Error(`expected a value at byte ${start}`);
    return [start, this.at];
  }
}

const decoder = new TextDecoder();

/** A member name as JSON.parse would read it (escapes such as `entr\u0079` included). */
function memberName(bytes: Uint8Array, [start, end]: [number, number]): string {
  const raw = bytes.subarray(start, end);
  return raw.includes(BACKSLASH) ? (JSON.parse(decoder.decode(raw)) as string) : decoder.decode(raw.subarray(1, -1));
}

function arrayElements(cursor: Cursor): [number, number][] {
  const out: [number, number][] = [];
  cursor.expect(OPEN_ARRAY);
  cursor.skipSpace();
  if (cursor.bytes[cursor.at] === CLOSE_ARRAY) {
    cursor.at++;
    return out;
  }
  for (;;) {
    out.push(cursor.value());
    cursor.skipSpace();
    const b = cursor.bytes[cursor.at++];
    if (b === CLOSE_ARRAY) return out;
    if (b !== COMMA) throw new Error(`expected ',' or ']' at byte ${cursor.at - 1}`);
  }
}

/** An entry's ranges: its `id` value, and each element of its `changes` array. */
export interface EntryRanges {
  id: [number, number] | null;
  changes: [number, number][];
}

/**
 * The ranges of one entry object at `range` of `bytes` (split one level further than scanBody,
 * for one change per delivery); a repeated member name's last one wins, as for JSON.parse.
 */
export function scanEntry(bytes: Uint8Array, [start, end]: [number, number]): EntryRanges {
  const cursor = new Cursor(bytes.subarray(0, end), start);
  const result: EntryRanges = { id: null, changes: [] };
  eachMember(cursor, (name) => {
    cursor.skipSpace();
    if (name === "changes" && bytes[cursor.at] === OPEN_ARRAY) result.changes = arrayElements(cursor);
    else if (name === "id") result.id = cursor.value();
    else {
      cursor.value();
      if (name === "changes") result.changes = [];
    }
  });
  return result;
}

/** Calls `member` with each member name of the object at the cursor, the cursor at its value. */
function eachMember(cursor: Cursor, member: (name: string) => void): void {
  const { bytes } = cursor;
  cursor.expect(OPEN_OBJECT);
  cursor.skipSpace();
  if (bytes[cursor.at] === CLOSE_OBJECT) {
    cursor.at++;
    return;
  }
  for (;;) {
    cursor.skipSpace();
    if (bytes[cursor.at] !== QUOTE) throw new Error(`expected a member name at byte ${cursor.at}`);
    const name = memberName(bytes, cursor.string());
    cursor.expect(COLON);
    member(name);
    cursor.skipSpace();
    const b = bytes[cursor.at++];
    if (b === CLOSE_OBJECT) return;
    if (b !== COMMA) throw new Error(`expected ',' or '}' at byte ${cursor.at - 1}`);
  }
}

/**
 * The ranges of `object` and of each `entry` element. When a member name repeats, the last one
 * wins, as it does for JSON.parse, so the ranges always describe the parsed value.
 */
export function scanBody(bytes: Uint8Array): BodyRanges {
  const cursor = new Cursor(bytes);
  const result: BodyRanges = { object: null, entries: [] };
  eachMember(cursor, (name) => {
    cursor.skipSpace();
    if (name === "entry" && bytes[cursor.at] === OPEN_ARRAY) result.entries = arrayElements(cursor);
    else if (name === "object") result.object = cursor.value();
    else {
      cursor.value();
      if (name === "entry") result.entries = [];
    }
  });
  return result;
}
