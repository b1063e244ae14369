import type { Deps } from "../deps.ts";
import { randomId } from "../runtime/random.ts";
import { boundedChanges } from "./changes.ts";
import type { Actor, AuditAction, AuditChanges, AuditEntry } from "../store/audit.ts";

/**
 * Who is making a change and from where: what every audited operation is given by its caller (a
 * route from its request, the CLI, the demo). It becomes the entry the store writes with the change.
 */
export interface AuditContext {
  actor: Actor;
  /** The address the request came from; null when no request did. */
  ip: string | null;
}

/** The operator API's bearer token (docs/operations.md#provisioning). */
export const byAdminToken = (ip: string | null): AuditContext => ({
  actor: { kind: "operator_token", id: "admin_token", email: null },
  ip,
});

/** `switchboard admin …`: the operator at the server's shell, who holds what the token guards. */
export const BY_CLI: AuditContext = { actor: { kind: "operator_token", id: "cli", email: null }, ip: null };

/** A person who runs the service, signed in to the operator console (src/operators/). */
export const byOperator = (operator: { id: string; email: string }, ip: string | null): AuditContext => ({
  actor: { kind: "operator", id: operator.id, email: operator.email },
  ip,
});

/** An account's user signed in to the dashboard or the dashboard API. */
export const byUser = (user: { id: string; email: string }, ip: string | null): AuditContext => ({
  actor: { kind: "user", id: user.id, email: user.email },
  ip,
});

/** The service itself (the demo's seeding, follow-ups of a change already recorded). */
export const bySystem = (part: string): AuditContext => ({
  actor: { kind: "system", id: part, email: null },
  ip: null,
});

/** The entry of one change, by `by`, at the clock's now: handed to the store write that makes the change. */
export function auditEntry(
  deps: Pick<Deps, "clock" | "random">,
  by: AuditContext,
  action: AuditAction,
  object: { kind: string; id: string },
  accountId: string | null,
  changes: AuditChanges = {},
): AuditEntry {
  return {
    id: randomId(deps.random, "aud"),
    at: deps.clock.now(),
    actor: by.actor,
    action,
    object,
    accountId,
    ip: by.ip,
    changes: boundedChanges(changes),
  };
}

/**
 * The entry of an update, as auditEntry's; none when the update changes nothing (a PATCH of the
 * values already there), so repeating a change never grows the log.
 */
export function changeEntry(
  deps: Pick<Deps, "clock" | "random">,
  by: AuditContext,
  action: AuditAction,
  object: { kind: string; id: string },
  accountId: string | null,
  changes: AuditChanges,
): AuditEntry | undefined {
  return Object.keys(changes).length === 0 ? undefined : auditEntry(deps, by, action, object, accountId, changes);
}
