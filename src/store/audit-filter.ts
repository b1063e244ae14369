import { and, eq, gte, inArray, lt, or, sql, type AnyColumn, type SQL } from "drizzle-orm";
import type { AuditFilter } from "./audit.ts";

/** The audit log's columns a filter reads, as both backends' schemas name them. */
interface Columns {
  at: AnyColumn;
  id: AnyColumn;
  accountId: AnyColumn;
  actorKind: AnyColumn;
  actorId: AnyColumn;
  actorEmail: AnyColumn;
  action: AnyColumn;
  objectKind: AnyColumn;
  objectId: AnyColumn;
}

/** Entries that pass `filter`, for either backend's query (newest first, keyset on (at, id)). */
export function auditConditions(t: Columns, filter: AuditFilter): SQL | undefined {
  const parts: (SQL | undefined)[] = [];
  if (filter.accountId !== undefined) parts.push(eq(t.accountId, filter.accountId));
  if (filter.actor !== undefined) {
    parts.push(or(eq(t.actorId, filter.actor), sql`lower(${t.actorEmail}) = ${filter.actor.toLowerCase()}`));
    if (filter.actorKinds) parts.push(inArray(t.actorKind, [...filter.actorKinds]));
  }
  if (filter.action !== undefined) {
    // `endpoint` means every `endpoint.*`: a comparison of the name's start, not LIKE, whose `_` matches anything.
    const prefix = `${filter.action}.`;
    parts.push(
      filter.action.includes(".")
        ? eq(t.action, filter.action)
        : sql`substr(${t.action}, 1, ${sql.raw(String(prefix.length))}) = ${prefix}`,
    );
  }
  if (filter.objectKind !== undefined) parts.push(eq(t.objectKind, filter.objectKind));
  if (filter.objectId !== undefined) parts.push(eq(t.objectId, filter.objectId));
  if (filter.from !== undefined) parts.push(gte(t.at, filter.from));
  if (filter.to !== undefined) parts.push(lt(t.at, filter.to));
  if (filter.before)
    parts.push(or(lt(t.at, filter.before.at), and(eq(t.at, filter.before.at), lt(t.id, filter.before.id))));
  return parts.length === 0 ? undefined : and(...parts);
}
