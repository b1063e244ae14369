/**
 * The audit log (docs/operations.md#audit-log): who changed what, when, from where, and the fields that
 * changed before → after, never a secret. An entry is written by the store method that makes the
 * change it records, in the same transaction (each such method takes an optional entry), so a
 * change is never without its entry and a change that fails leaves none.
 */
import type { ACTOR_KINDS, AUDIT_ACTIONS } from "./vocabulary.ts";

export type ActorKind = (typeof ACTOR_KINDS)[number];
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface Actor {
  kind: ActorKind;
  /** The operator's, user's or token's id; for the service, the part of it that acted. */
  id: string;
  email: string | null;
}

/** Each field that changed: [before, after]; a secret's values are never here (see src/audit/changes.ts). */
export type AuditChanges = Record<string, [unknown, unknown]>;

export interface AuditEntry {
  id: string;
  at: number;
  actor: Actor;
  action: AuditAction;
  object: { kind: string; id: string };
  /** The account the change belongs to; null for what belongs to none (a failed sign-in of an unknown email). */
  accountId: string | null;
  /** The address the request came from; null when no request did (the CLI, the service). */
  ip: string | null;
  changes: AuditChanges;
}

export interface AuditFilter {
  accountId?: string;
  /** An actor's id, or an actor's email. */
  actor?: string;
  /** With `actor`: only actors of these kinds are looked for (an account cannot find an operator by id or email). */
  actorKinds?: readonly ActorKind[];
  /** One action, or every action on a kind of object (`endpoint` for `endpoint.*`). */
  action?: string;
  objectKind?: string;
  objectId?: string;
  /** [from, to) on the entry's time. */
  from?: number;
  to?: number;
  /** Keyset: entries strictly older than this one (newest first). */
  before?: { at: number; id: string };
}

export interface AuditStore {
  /** Entries passing `filter`, newest first (by time, then id). */
  list(filter: AuditFilter, limit: number): Promise<AuditEntry[]>;
  /**
   * Writes the entry of a change made outside the database (a backup's files) on its own, after
   * that change; every change of rows hands its entry to the method that makes it instead.
   */
  record(entry: AuditEntry): Promise<void>;
}

/**
 * The operator's side: its entries keep AUDIT_RETENTION; every other entry of an account (its
 * users', the service's on its behalf) goes with the account's history (docs/operations.md#audit-log).
 */
export const OPERATOR_ACTORS: readonly ActorKind[] = ["operator", "operator_token"];
/** OPERATOR_ACTORS as an SQL list, for both backends' purges. */
export const OPERATOR_ACTORS_SQL = OPERATOR_ACTORS.map((k) => `'${k}'`).join(", ");

/** Who disables an endpoint that keeps failing (docs/webhooks.md#endpoint-health-and-disabling): the relay, as it records an attempt. */
export const RELAY_ACTOR: Actor = Object.freeze({ kind: "system", id: "webhook_relay", email: null });

/**
 * The entry of an automatic disable, written by the queue in the transaction of the attempt that
 * disabled the endpoint; its id is that attempt's (delivery, lease), which completes once.
 */
export function automaticDisable(
  endpoint: { id: string; accountId: string },
  reason: string,
  at: number,
  by: { deliveryId: string; leaseId: string },
): AuditEntry {
  return {
    id: `aud_${by.deliveryId}_${by.leaseId}`,
    at,
    actor: RELAY_ACTOR,
    action: "endpoint.disable",
    object: { kind: "endpoint", id: endpoint.id },
    accountId: endpoint.accountId,
    ip: null,
    changes: { enabled: [true, false], disabled_reason: [null, reason] },
  };
}

/**
 * How many entries an account's own users may add in an hour of the clock (docs/operations.md#audit-log):
 * past it their changes still apply, and each is counted in the hour's one `audit.capped` entry
 * (overflowEntry) instead of an entry of its own, so no account grows the log without bound.
 */
export const ACCOUNT_HOURLY_ENTRIES = 300;
const HOUR = 3_600_000;

/** Who writes the count of an hour's entries past the figure. */
export const AUDIT_CAP_ACTOR: Actor = Object.freeze({ kind: "system", id: "audit_cap", email: null });

/** The field of an `audit.capped` entry that counts the hour's changes not recorded one by one. */
export const NOT_RECORDED = "not_recorded";

/**
 * Where an entry counts against the figure: its account, the start of its hour, and which of the
 * two figures (failed sign-ins count apart, so that guesses from outside never push the account's
 * own changes out of the log). Failed sign-ins of no account (an unknown email, an operator) share
 * one figure of their own. null when uncapped (the operator's changes, the service's).
 */
export interface CapWindow {
  accountId: string | null;
  since: number;
  failedSignIns: boolean;
}

export function capWindow(e: AuditEntry): CapWindow | null {
  const since = e.at - (e.at % HOUR);
  const failedSignIns = e.action === "session.failed";
  if (e.accountId === null) return failedSignIns ? { accountId: null, since, failedSignIns } : null;
  return e.actor.kind === "user" ? { accountId: e.accountId, since, failedSignIns } : null;
}

/** The entries a window counts, in both backends' SQL, given its parameters' placeholders. */
export function windowCondition(
  w: Pick<CapWindow, "accountId">,
  p: { accountId: string; since: string; failedSignIns: string },
): string {
  // Both shapes name every parameter (PostgreSQL types each one it is given).
  const whose =
    w.accountId === null
      ? `account_id IS NULL AND ${p.accountId} IS NULL`
      : `account_id = ${p.accountId} AND actor_kind = 'user'`;
  return `${whose} AND at >= ${p.since} AND (action = 'session.failed') = ${p.failedSignIns}`;
}

/**
 * The entry that counts `e` in place of its own, one per account and hour (its id says which):
 * written with a count of 1 the first time, then each backend adds 1 to NOT_RECORDED.
 */
export function overflowEntry(e: AuditEntry, { accountId, since, failedSignIns }: CapWindow): AuditEntry {
  return {
    id: `aud_capped_${accountId ?? "none"}_${since}${failedSignIns ? "_sign_ins" : ""}`,
    at: e.at,
    actor: AUDIT_CAP_ACTOR,
    action: "audit.capped",
    object: { kind: failedSignIns ? "sign_in" : "account", id: accountId ?? "unknown" },
    accountId,
    ip: null,
    changes: { [NOT_RECORDED]: [null, 1] },
  };
}

/** An entry as a row of either backend's `audit_log` (changes as JSON text: the move copies text as it is). */
export interface AuditRow {
  id: string;
  at: number;
  actorKind: string;
  actorId: string;
  actorEmail: string | null;
  action: string;
  objectKind: string;
  objectId: string;
  accountId: string | null;
  ip: string | null;
  changes: string;
}

export function auditRow(e: AuditEntry): AuditRow {
  return {
    id: e.id,
    at: e.at,
    actorKind: e.actor.kind,
    actorId: e.actor.id,
    actorEmail: e.actor.email,
    action: e.action,
    objectKind: e.object.kind,
    objectId: e.object.id,
    accountId: e.accountId,
    ip: e.ip,
    changes: JSON.stringify(e.changes),
  };
}

export function fromAuditRow(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    actor: { kind: r.actorKind as ActorKind, id: r.actorId, email: r.actorEmail },
    action: r.action as AuditAction,
    object: { kind: r.objectKind, id: r.objectId },
    accountId: r.accountId,
    ip: r.ip,
    changes: JSON.parse(r.changes) as AuditChanges,
  };
}
