import type { Route } from "../proxy/allow-list.ts";
import { routeTemplate } from "../proxy/call-trace.ts";
import type { RequestRecord } from "../store/requests.ts";

/** The largest successful send answer read for its message id (a send's answer is about 150 bytes). */
export const MESSAGE_ID_SCAN_BYTES = 8 * 1024;

/**
 * What the pipeline learns of a call as it runs, for its request log record: filled step by step,
 * turned into a record once the caller has its answer. `key` is set once the caller is known:
 * calls refused before that belong to no account and are not logged.
 */
export interface CallFacts {
  key: { id: string; accountId: string } | null;
  route: Route | null;
  phoneNumberId: string | null;
  wabaId: string | null;
  upstreamMs: number | null;
  messageId: string | null;
  /** Set (after the caller's answer) from an upstream error body of at most 64 KB. */
  upstreamError: { code: number | null; subcode: number | null } | null;
  /** The record, once made: an upstream error body that passes after it fills it in. */
  record?: RequestRecord;
}

/** An upstream error body has passed: its code goes on the call's record (made by then, or about to be). */
export function noteUpstreamError(
  facts: CallFacts,
  error: { code: number | null; subcode: number | null } | null,
): void {
  facts.upstreamError = error;
  if (facts.record && error) {
    facts.record.upstreamErrorCode = error.code;
    facts.record.upstreamErrorSubcode = error.subcode;
  }
}

export const noFacts = (): CallFacts => ({
  key: null,
  route: null,
  phoneNumberId: null,
  wabaId: null,
  upstreamMs: null,
  messageId: null,
  upstreamError: null,
});

/** The allow-list row as the log names it, e.g. "POST /{version}/{phone_number_id}/messages". */
export const routeLabel = (route: Route) => `${route.method} ${routeTemplate(route)}`;

const WAMID = /"id"\s*:\s*"(wamid\.[^"\\]{1,200})"/;
const text = new TextDecoder();

/** The message id in a send's answer, read from a copy of its bytes (the caller gets them untouched). */
export function messageIdIn(bytes: Uint8Array): string | null {
  return WAMID.exec(text.decode(bytes))?.[1] ?? null;
}

/** `error.code` and `error.error_subcode` of an upstream error body, if it is JSON with them. */
export function upstreamErrorIn(bytes: Uint8Array): { code: number | null; subcode: number | null } | null {
  try {
    const error = (JSON.parse(text.decode(bytes)) as { error?: { code?: unknown; error_subcode?: unknown } } | null)
      ?.error;
    if (!error) return null;
    return {
      code: typeof error.code === "number" ? error.code : null,
      subcode: typeof error.error_subcode === "number" ? error.error_subcode : null,
    };
  } catch {
    return null;
  }
}

const size = (value: string | null) => (value === null || !/^\d+$/.test(value) ? null : Number(value));

/**
 * The record of a call the caller has its answer to: our error code (null when upstream
 * answered), upstream's status when it did. The upstream error's code is filled in later, when its
 * body has passed (the record is still in the buffer then: it is written a second or so after).
 */
export function recordOf(input: {
  requestId: string;
  at: number;
  method: string;
  facts: CallFacts & { key: NonNullable<CallFacts["key"]> };
  response: Response;
  ourCode: number | null;
  requestLength: string | null;
}): RequestRecord {
  const { facts, response } = input;
  return {
    id: input.requestId,
    accountId: facts.key.accountId,
    at: input.at,
    apiKeyId: facts.key.id,
    method: input.method,
    route: facts.route && routeLabel(facts.route),
    phoneNumberId: facts.phoneNumberId,
    wabaId: facts.wabaId,
    status: response.status,
    errorCode: input.ourCode,
    upstreamStatus: input.ourCode === null ? response.status : null,
    upstreamErrorCode: facts.upstreamError?.code ?? null,
    upstreamErrorSubcode: facts.upstreamError?.subcode ?? null,
    upstreamMs: facts.upstreamMs === null ? null : Math.round(facts.upstreamMs * 100) / 100,
    requestBytes: size(input.requestLength),
    responseBytes: size(response.headers.get("content-length")),
    messageId: facts.messageId,
  };
}
