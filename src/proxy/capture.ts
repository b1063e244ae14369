import type { RequestRecord } from "../store/requests.ts";
import type { ApiKey } from "../store/types.ts";
import type { Target } from "./checks.ts";

/** The largest successful send answer read for its message id (a send's answer is about 150 bytes). */
export const MESSAGE_ID_SCAN_BYTES = 8 * 1024;

/**
 * A proxied call's request log record, made when the call starts and filled in by the pipeline as
 * it learns (the key, the allow-list row, upstream's answer): the only object the log adds to a
 * call. `apiKeyId` stays empty until the caller is known: calls refused before that belong to no
 * account and are not logged. Every field is set here, so that every record has one shape.
 */
export function startRecord(id: string, at: number, method: string): RequestRecord {
  return {
    id,
    accountId: "",
    at,
    apiKeyId: "",
    method,
    route: null,
    phoneNumberId: null,
    wabaId: null,
    status: 0,
    errorCode: null,
    upstreamStatus: null,
    upstreamErrorCode: null,
    upstreamErrorSubcode: null,
    upstreamMs: null,
    requestBytes: null,
    responseBytes: null,
    messageId: null,
  };
}

/** Step 2 found the caller: the call is logged, on its account. */
export function noteCaller(record: RequestRecord, key: Pick<ApiKey, "id" | "accountId">): void {
  record.accountId = key.accountId;
  record.apiKeyId = key.id;
}

/** Step 4 found what the call is about. */
export function noteTarget(record: RequestRecord, target: Target): void {
  record.route = target.route.label;
  record.phoneNumberId = target.number?.phoneNumberId ?? null;
  record.wabaId = target.waba.wabaId;
}

/** Whether the call's caller was known (only then is its record logged). */
export const hasCaller = (record: RequestRecord) => record.apiKeyId !== "";

const size = (value: string | null) => (value === null || !/^\d+$/.test(value) ? null : Number(value));

/**
 * The rest of a call's record once the caller has its answer: our error code (null when upstream
 * answered), upstream's status when it did. An upstream error's code comes later, when its body
 * has passed (noteUpstreamError): the record goes to the log only then.
 */
export function finishRecord(
  record: RequestRecord,
  response: Response,
  ourCode: number | null,
  requestLength: string | null,
): void {
  record.status = response.status;
  record.errorCode = ourCode;
  record.upstreamStatus = ourCode === null ? response.status : null;
  record.requestBytes = size(requestLength);
  record.responseBytes = size(response.headers.get("content-length"));
}

/** Until upstream's response headers arrived, to the hundredth of a millisecond. */
export function noteUpstreamLatency(record: RequestRecord, ms: number): void {
  record.upstreamMs = Math.round(ms * 100) / 100;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_ID = 200;
const VALUE_START = new TextEncoder().encode('"wamid.');
const KEY = new TextEncoder().encode('"id"');
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
const text = new TextDecoder();

/** Whether `"id"`, a colon and any white space come right before `at`. */
function idKeyBefore(bytes: Uint8Array, at: number): boolean {
  let i = at - 1;
  while (isSpace(bytes[i])) i--;
  if (bytes[i] !== 0x3a) return false;
  i--;
  while (isSpace(bytes[i])) i--;
  for (let k = KEY.length - 1; k >= 0; k--, i--) if (bytes[i] !== KEY[k]) return false;
  return true;
}

/**
 * The message id in a send's answer (`"id": "wamid.…"`), found by scanning its bytes: nothing of
 * the answer is decoded or parsed but the id itself (the caller gets the bytes untouched).
 */
export function messageIdIn(bytes: Uint8Array): string | null {
  next: for (let at = bytes.indexOf(QUOTE); at !== -1; at = bytes.indexOf(QUOTE, at + 1)) {
    for (let k = 1; k < VALUE_START.length; k++) if (bytes[at + k] !== VALUE_START[k]) continue next;
    if (!idKeyBefore(bytes, at)) continue;
    // After `wamid.`: 1 to MAX_ID characters up to the closing quote, none of them an escape.
    const first = at + VALUE_START.length;
    const last = first + MAX_ID;
    let end = first;
    while (end <= last && end < bytes.length && bytes[end] !== QUOTE && bytes[end] !== BACKSLASH) end++;
    if (end === first || end > last || bytes[end] !== QUOTE) continue;
    return text.decode(bytes.subarray(at + 1, end));
  }
  return null;
}

/**
 * An upstream error body has passed: its `error.code` and `error.error_subcode`, if it is JSON with
 * them, go on the call's record (an error answer is read whole, at most 64 KB, after the caller's).
 */
export function noteUpstreamError(record: RequestRecord, bytes: Uint8Array): void {
  let error: { code?: unknown; error_subcode?: unknown } | undefined;
  try {
    error = (JSON.parse(text.decode(bytes)) as { error?: typeof error } | null)?.error;
  } catch {
    return;
  }
  if (!error) return;
  record.upstreamErrorCode = typeof error.code === "number" ? error.code : null;
  record.upstreamErrorSubcode = typeof error.error_subcode === "number" ? error.error_subcode : null;
}
