import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ERRORS } from "../../src/errors/catalog.ts";
import { isNumeric } from "./route-table.ts";

/**
 * Hostile values, built once for a whole sweep. In a URL (a path segment or a query value) they
 * are text, sent percent-encoded, or, for `raw`, as they are; in a JSON body they are JSON text,
 * put in place of one property or of the whole body.
 */
export interface UrlValue {
  name: string;
  text: string;
  raw?: boolean;
}
/** `deep`: 100,000 levels of nesting, which the server may take long over: the sweep sends these one at a time. */
export interface JsonValue {
  name: string;
  json: string;
  deep?: true;
}

/** 100,000 nested arrays. */
const DEEP = "[".repeat(100_000) + "]".repeat(100_000);
const DEEP_OBJECT = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
const PAST_DATES = "9999999999999999999999999999999999999";

/** Text every kind of parameter may be given. */
const TEXTS: UrlValue[] = [
  { name: "NUL", text: "a\u0000b" },
  { name: "control characters", text: "a\u0001\u001b\u007fb" },
  { name: "CR LF", text: "a\r\nX-Injected: 1" },
  { name: "a number past a date's range", text: PAST_DATES },
  { name: "past an integer column (2^31)", text: "2147483648" },
  { name: "ten digits", text: "9999999999" },
  { name: "past 2^63", text: "9223372036854775808" },
  { name: "minus a number past a date's range", text: `-${PAST_DATES}` },
  { name: "a fraction", text: "1.5" },
  { name: "NaN", text: "NaN" },
  { name: "Infinity", text: "Infinity" },
  { name: "-Infinity", text: "-Infinity" },
  { name: "a time past a date's range", text: "+275760-09-13T00:00:00.001Z" },
];

export const URL_VALUES: UrlValue[] = [
  ...TEXTS,
  // As long as Bun takes in a request line (a longer one is its own bare 431, before the app).
  { name: "16,000 characters", text: "x".repeat(16_000) },
  { name: "a lone %", text: "%", raw: true },
  { name: "a bad escape", text: "%zz", raw: true },
  { name: "bytes that are not UTF-8", text: "%C3%28%ED%A0%80", raw: true },
];

/** Values of one JSON property: hostile text, numbers no column holds, every wrong type, nesting. */
export const PROPERTY_VALUES: JsonValue[] = [
  ...TEXTS.map(({ name, text }) => ({ name: `"${name}"`, json: JSON.stringify(text) })),
  { name: "1 MB string", json: JSON.stringify("x".repeat(1_000_000)) },
  { name: "a lone surrogate", json: '"a\\ud800b"' },
  { name: "the number past a date's range", json: PAST_DATES },
  { name: "the number 2^31, past an integer column", json: "2147483648" },
  { name: "the number 2^63", json: "9223372036854775808" },
  { name: "a negative number past a date's range", json: `-${PAST_DATES}` },
  { name: "1e400 (Infinity once parsed)", json: "1e400" },
  { name: "NaN (not JSON)", json: "NaN" },
  { name: "a fraction", json: "1.5" },
  { name: "-1", json: "-1" },
  { name: "true", json: "true" },
  { name: "null", json: "null" },
  { name: "an object", json: '{"a":1}' },
  { name: "an array", json: '["a"]' },
  { name: "100,000-deep arrays", json: DEEP, deep: true },
];

/** Whole bodies: not an object, not JSON, too deep, too big, a prototype's name. */
export const BODIES: { name: string; type: string; bytes: string | Uint8Array<ArrayBuffer>; deep?: true }[] = [
  { name: "100,000-deep arrays", type: "application/json", bytes: DEEP, deep: true },
  { name: "100,000-deep objects", type: "application/json", bytes: DEEP_OBJECT, deep: true },
  { name: "a 1 MB string", type: "application/json", bytes: JSON.stringify("x".repeat(1_000_000)) },
  { name: "an array", type: "application/json", bytes: "[]" },
  { name: "a number", type: "application/json", bytes: "1e400" },
  { name: "null", type: "application/json", bytes: "null" },
  { name: "broken JSON", type: "application/json", bytes: '{"a":' },
  { name: "NaN", type: "application/json", bytes: '{"a":NaN}' },
  {
    name: "__proto__",
    type: "application/json",
    bytes: '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
  },
  {
    name: "bytes that are not UTF-8",
    type: "application/json",
    bytes: new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]),
  },
  { name: "a NUL", type: "application/json", bytes: '{"a":"\u0000"}' },
];

/** A time parameter's name (ISO 8601 or epoch milliseconds). */
const TIME_NAMES = new Set(["from", "to", "since"]);
const MAX_DATE_MS = 8.64e15;
/** C0 controls and DEL, which the control-character guard refuses in a URL. */
const hasControl = (text: string) => [...text].some((c) => c < " " || c === "\u007f");

/**
 * True when an input value must be refused (4xx) whatever else the request says: a value its
 * schema does not admit, a time no date holds, and in the URL any control character.
 */
export function mustRefuse(schema: TSchema | null, name: string, value: unknown, inUrl: boolean): boolean {
  if (inUrl && typeof value === "string" && hasControl(value)) return true;
  if (TIME_NAMES.has(name) && typeof value === "string" && value !== "") {
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return true;
  }
  if (!schema) return false;
  // Elysia's t.Numeric: a number, or text that reads as one, within the bounds.
  if (isNumeric(schema) && (typeof value === "string" || typeof value === "number")) {
    const {
      minimum = -Infinity,
      maximum = Infinity,
      multipleOf,
    } = schema as { minimum?: number; maximum?: number; multipleOf?: number };
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof value === "string" && value === "" && Value.Check(schema, value)) return false;
    if (typeof number !== "number" || !Number.isFinite(number) || number < minimum || number > maximum) return true;
    return multipleOf !== undefined && number % multipleOf !== 0;
  }
  return !Value.Check(schema, value);
}

/** Why an answer is not an error of the catalog's envelope, or null when it is one. */
export function envelopeProblem(status: number, text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "the body is not JSON";
  }
  const error = (body as { error?: Record<string, unknown> })?.error;
  if (!error || Object.keys(body as object).length !== 1) return "no error envelope";
  const keys = Object.keys(error).sort().join(",");
  if (keys !== "code,message,trace_id,type") return `envelope keys ${keys}`;
  if (typeof error.message !== "string" || typeof error.trace_id !== "string" || !error.message)
    return "message or trace_id not text";
  const known = Object.values(ERRORS).some(
    (e) => e.status === status && e.type === error.type && e.code === error.code,
  );
  return known ? null : `${status} ${String(error.type)}/${String(error.code)} is not in the catalog`;
}

/**
 * Request lines and Host headers that leave a request without a usable host, each a function of
 * the method and target: every one is a 400 in the envelope on every route (issue 34, item 5).
 * (HTTP/1.1 without Host is Bun's own bare 400, before the app: test/http/malformed-host.test.ts.)
 */
export const HOSTLESS: { name: string; head: (method: string, target: string) => string }[] = [
  { name: "Host: a b", head: (method, target) => `${method} ${target} HTTP/1.1\r\nHost: a b` },
  { name: "Host: [::1", head: (method, target) => `${method} ${target} HTTP/1.1\r\nHost: [::1` },
  { name: "an empty Host", head: (method, target) => `${method} ${target} HTTP/1.1\r\nHost:` },
  { name: "HTTP/1.0 without Host", head: (method, target) => `${method} ${target} HTTP/1.0` },
];
