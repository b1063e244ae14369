import { t } from "elysia";
import { iso } from "../http/iso-time.ts";
import { AppError } from "../errors/catalog.ts";
import { decodeCursor, encodeCursor } from "../http/cursor.ts";
import { timeParam } from "../http/time-param.ts";
import { wholeNumber } from "../http/whole-number.ts";
import type { Deps } from "../deps.ts";
import type { AuditEntry, AuditFilter } from "../store/audit.ts";
import { AUDIT_ACTIONS } from "../store/vocabulary.ts";

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

/** The filters an account has on its own Activity (`GET /api/activity`); empty means none, as absent does. */
const accountFilters = {
  action: t.Optional(
    t.String({ maxLength: 64, description: "one action (`api_key.revoke`), or every action on a kind (`endpoint`)" }),
  ),
  actor: t.Optional(t.String({ maxLength: 320, description: "an actor's id or email" })),
  from: t.Optional(t.String({ maxLength: 40 })),
  to: t.Optional(t.String({ maxLength: 40 })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
  limit: t.Optional(wholeNumber({ minimum: 1, maximum: MAX_PAGE })),
};

export const activityQuery = t.Object(accountFilters);
export type ActivityQuery = typeof activityQuery.static;

/** The operator's (`GET /admin/audit`): every account's, or one's, and one object's. */
export const auditQuery = t.Object({
  ...accountFilters,
  account_id: t.Optional(t.String({ maxLength: 64 })),
  object_kind: t.Optional(t.String({ maxLength: 64 })),
  object_id: t.Optional(t.String({ maxLength: 200 })),
});
export type AuditQuery = typeof auditQuery.static;

/** The kinds of object the actions name (`endpoint` of `endpoint.update`), each a filter of its own. */
export const ACTION_KINDS = [...new Set(AUDIT_ACTIONS.map((a) => a.slice(0, a.indexOf("."))))];

function actionFilter(action: string | undefined): string | undefined {
  if (!action) return undefined;
  if ((AUDIT_ACTIONS as readonly string[]).includes(action) || ACTION_KINDS.includes(action)) return action;
  throw new AppError(
    "invalid_request",
    `action must be one of ${AUDIT_ACTIONS.join(", ")}, or a kind of object (${ACTION_KINDS.join(", ")}).`,
  );
}

/**
 * One page of the audit log, newest first: of one account when `accountId` is given (its Activity,
 * whatever the query says), else as the operator's query filters it.
 */
export async function listAudit(
  deps: Pick<Deps, "store">,
  query: AuditQuery,
  accountId?: string,
): Promise<{ data: AuditEntry[]; nextCursor: string | null }> {
  const limit = Math.min(query.limit ?? DEFAULT_PAGE, MAX_PAGE);
  const filter: AuditFilter = {
    accountId: accountId ?? (query.account_id || undefined),
    actor: query.actor?.trim() || undefined,
    actorKinds: accountId === undefined ? undefined : ACCOUNT_VISIBLE_ACTORS,
    action: actionFilter(query.action),
    objectKind: query.object_kind || undefined,
    objectId: query.object_id || undefined,
    from: timeParam("from", query.from),
    to: timeParam("to", query.to),
    before: query.cursor ? decodeCursor(query.cursor) : undefined,
  };
  const rows = await deps.store.audit.list(filter, limit + 1);
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(last.at, last.id) : null };
}

/** An entry as the API gives it (docs/operations.md#audit-log). */
export const auditView = (e: AuditEntry) => ({
  id: e.id,
  at: iso(e.at),
  actor: { kind: e.actor.kind, id: e.actor.id, ...(e.actor.email === null ? {} : { email: e.actor.email }) },
  action: e.action,
  object: e.object,
  account_id: e.accountId,
  ip: e.ip,
  changes: e.changes,
});

export type AuditView = ReturnType<typeof auditView>;

/** Whom an account may look for by id or email in its own Activity: not the people who run the service. */
const ACCOUNT_VISIBLE_ACTORS = ["user", "system"] as const;

/** How every operator shows in an account's view: no id, email or address of theirs (CONTRACT 8). */
const AN_OPERATOR = Object.freeze({ kind: "operator" as const });

/**
 * An entry as the account it belongs to sees it (`GET /api/activity`, the Activity page): a change
 * by an operator or the operator token is `actor: {kind: "operator"}` with no id, email or
 * address, and `ip` null; the operator's view (auditView) keeps them.
 */
export function accountAuditView(e: AuditEntry): AccountAuditView {
  const view = auditView(e);
  return e.actor.kind === "operator" || e.actor.kind === "operator_token"
    ? { ...view, actor: AN_OPERATOR, ip: null }
    : view;
}

export type AccountAuditView = Omit<AuditView, "actor"> & {
  actor: AuditView["actor"] | typeof AN_OPERATOR;
};
