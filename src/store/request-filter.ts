import { and, eq, gte, lt, or, type AnyColumn, type SQL } from "drizzle-orm";
import type { RequestFilter } from "./requests.ts";

/** The request log's columns a filter reads, as both backends' schemas name them. */
interface Columns {
  accountId: AnyColumn;
  at: AnyColumn;
  id: AnyColumn;
  phoneNumberId: AnyColumn;
  status: AnyColumn;
  errorCode: AnyColumn;
  upstreamErrorCode: AnyColumn;
  apiKeyId: AnyColumn;
}

/** One account's records that pass `filter`, for either backend's query (newest first, keyset on (at, id)). */
export function requestConditions(t: Columns, accountId: string, filter: RequestFilter): SQL | undefined {
  const parts: (SQL | undefined)[] = [eq(t.accountId, accountId)];
  if (filter.phoneNumberId !== undefined) parts.push(eq(t.phoneNumberId, filter.phoneNumberId));
  if (filter.statusClass !== undefined)
    parts.push(gte(t.status, filter.statusClass * 100), lt(t.status, filter.statusClass * 100 + 100));
  if (filter.errorCode !== undefined)
    parts.push(or(eq(t.errorCode, filter.errorCode), eq(t.upstreamErrorCode, filter.errorCode)));
  if (filter.apiKeyId !== undefined) parts.push(eq(t.apiKeyId, filter.apiKeyId));
  if (filter.from !== undefined) parts.push(gte(t.at, filter.from));
  if (filter.to !== undefined) parts.push(lt(t.at, filter.to));
  if (filter.before)
    parts.push(or(lt(t.at, filter.before.at), and(eq(t.at, filter.before.at), lt(t.id, filter.before.id))));
  return and(...parts);
}
