import { t } from "elysia";
import { iso } from "../http/iso-time.ts";
import { AppError } from "../errors/catalog.ts";
import { decodeCursor, encodeCursor } from "../http/cursor.ts";
import { timeParam } from "../http/time-param.ts";
import { MAX_INTEGER_COLUMN, wholeNumber } from "../http/whole-number.ts";
import type { Deps } from "../deps.ts";
import { HOUR, hourOf } from "../store/hours.ts";
import type { RequestFilter, RequestRecord, UsageCount } from "../store/requests.ts";
import { explainCall } from "./explain.ts";

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

export const requestQuery = t.Object({
  number: t.Optional(t.String({ maxLength: 64 })),
  status: t.Optional(t.Union([t.Literal("2xx"), t.Literal("4xx"), t.Literal("5xx"), t.Literal("")])),
  error_code: t.Optional(t.Union([wholeNumber({ minimum: 0, maximum: MAX_INTEGER_COLUMN }), t.Literal("")])),
  api_key_id: t.Optional(t.String({ maxLength: 64 })),
  from: t.Optional(t.String({ maxLength: 40 })),
  to: t.Optional(t.String({ maxLength: 40 })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
  limit: t.Optional(wholeNumber({ minimum: 1, maximum: MAX_PAGE })),
});
export type RequestQuery = typeof requestQuery.static;

export const usageQuery = t.Object({
  account_id: t.Optional(t.String({ maxLength: 64 })),
  from: t.String({ maxLength: 40 }),
  to: t.Optional(t.String({ maxLength: 40 })),
});

/** One page of an account's request log, newest first, as `GET /api/requests` gives it. */
export async function listRequests(deps: Pick<Deps, "store">, accountId: string, query: RequestQuery) {
  const limit = Math.min(query.limit ?? DEFAULT_PAGE, MAX_PAGE);
  const filter: RequestFilter = {
    phoneNumberId: query.number || undefined,
    statusClass: query.status ? Number(query.status[0]) : undefined,
    errorCode: query.error_code === "" || query.error_code === undefined ? undefined : Number(query.error_code),
    apiKeyId: query.api_key_id || undefined,
    from: timeParam("from", query.from),
    to: timeParam("to", query.to),
    before: query.cursor ? decodeCursor(query.cursor) : undefined,
  };
  const rows = await deps.store.requests.list(accountId, filter, limit + 1);
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(last.at, last.id) : null };
}

/** One logged call of the account, looked up by its request id as pasted (spaces and quotes around it are ignored); 404 otherwise. */
export async function getRequest(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<RequestRecord> {
  const record = await deps.store.requests.get(accountId, id.trim().replace(/^["']|["']$/g, ""));
  if (!record)
    throw new AppError(
      "not_found",
      "No call with this request id in this account's log (it may be past the retention window).",
    );
  return record;
}

/** A logged call as the API gives it; the key's name is read from the directory (the log keeps its id only). */
export function requestView(deps: Pick<Deps, "store">, r: RequestRecord) {
  return {
    id: r.id,
    at: iso(r.at),
    api_key_id: r.apiKeyId,
    api_key_name: deps.store.directory.apiKey(r.apiKeyId)?.name ?? null,
    api_key_prefix: deps.store.directory.apiKey(r.apiKeyId)?.prefix ?? null,
    method: r.method,
    route: r.route,
    phone_number_id: r.phoneNumberId,
    waba_id: r.wabaId,
    status: r.status,
    error_code: r.errorCode,
    upstream_status: r.upstreamStatus,
    upstream_error_code: r.upstreamErrorCode,
    upstream_error_subcode: r.upstreamErrorSubcode,
    upstream_ms: r.upstreamMs,
    request_bytes: r.requestBytes,
    response_bytes: r.responseBytes,
    message_id: r.messageId,
    explanation: explainCall(r),
  };
}

/** Usage counts of the hours that start in [from, to): whole hours, the current one included by default. */
export async function usage(
  deps: Pick<Deps, "store" | "clock">,
  accountId: string | null,
  from: string,
  to?: string,
): Promise<UsageCount[]> {
  const start = timeParam("from", from);
  if (start === undefined)
    throw new AppError("invalid_request", "from is required: an ISO 8601 time such as 2026-11-24T10:00:00Z.");
  const end = timeParam("to", to) ?? hourOf(deps.clock.now()) + HOUR;
  return deps.store.requests.usage(accountId, hourOf(start), end);
}

export const usageView = (u: UsageCount) => ({
  account_id: u.accountId,
  target_id: u.targetId,
  hour: iso(u.hour),
  kind: u.kind,
  label: u.label,
  count: u.count,
});
