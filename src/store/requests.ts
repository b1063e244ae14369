import type { Retention } from "./types.ts";

/**
 * One proxied call of an account, as its request log keeps it (issue 19): what was asked, who
 * asked (the key's id, never the key), what we answered, and what upstream answered when it was
 * asked. Calls refused before the caller's key was known belong to no account and are not kept.
 */
export interface RequestRecord {
  /** The request id: X-Proxy-Request-Id, and `trace_id` of our errors. */
  id: string;
  accountId: string;
  at: number;
  apiKeyId: string;
  method: string;
  /** The allow-list row, e.g. "POST /{phone_number_id}/messages"; null when the call matched none. */
  route: string | null;
  phoneNumberId: string | null;
  wabaId: string | null;
  /** The status the caller got. */
  status: number;
  /** Our error's code when we answered (SPEC 7.2), else null. */
  errorCode: number | null;
  upstreamStatus: number | null;
  /** `error.code` and `error_subcode` of an upstream error answer. */
  upstreamErrorCode: number | null;
  upstreamErrorSubcode: number | null;
  /** Until upstream's response headers arrived. */
  upstreamMs: number | null;
  requestBytes: number | null;
  responseBytes: number | null;
  /** The message id upstream gave a successful send. */
  messageId: string | null;
}

/** Calls of one hour on one number (or WABA), counted by what happened to them. */
export interface UsageCount {
  accountId: string;
  /** The number, or the WABA for calls made at a WABA id. */
  targetId: string;
  hour: number;
  /** `forwarded` by allow-list row, `upstream_error` by upstream code, `refused` by our code. */
  kind: "forwarded" | "upstream_error" | "refused";
  label: string;
  count: number;
}

export interface RequestFilter {
  phoneNumberId?: string;
  /** 2, 4 or 5: the class of the status the caller got. */
  statusClass?: number;
  /** Ours or upstream's. */
  errorCode?: number;
  apiKeyId?: string;
  from?: number;
  to?: number;
  /** Keyset: records strictly older than this one (newest first). */
  before?: { at: number; id: string };
}

/** The request log's storage: appended in batches, off the proxy's path. */
export interface RequestLogStore {
  /** One batch of records and the usage counts they add, in one transaction. */
  append(records: RequestRecord[], usage: UsageCount[]): Promise<void>;
  list(accountId: string, filter: RequestFilter, limit: number): Promise<RequestRecord[]>;
  get(accountId: string, id: string): Promise<RequestRecord | undefined>;
  /** The call(s) upstream gave this message id. */
  byMessageId(accountId: string, messageId: string): Promise<RequestRecord[]>;
  /** Usage counts of the hours in [from, to), of one account or of all. */
  usage(accountId: string | null, from: number, to: number): Promise<UsageCount[]>;
  /** Drops records past their account's retention, and usage counts older than `usageBefore`. */
  purge(
    now: number,
    retentionMs: Record<Retention, number>,
    usageBefore: number,
  ): Promise<{ requests: number; usage: number }>;
}
