import { t } from "elysia";
import { createUserBody } from "../accounts/schemas.ts";
import { changesOf, removedOf, SECRET_BEFORE, SECRET_CHANGED } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { iso } from "../http/iso-time.ts";
import { hashPassword } from "../crypto/password.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { randomId } from "../runtime/random.ts";
import type { Operator } from "../store/operators.ts";

/**
 * Operator users (docs/operations.md#the-operator-console) as plain functions, for `switchboard
 * admin operators …`: people who sign in to the operator console, each with their own password, in
 * place of a shared token. Each change is recorded in the audit log, by `by`, with no account.
 */
type OperatorDeps = Pick<Deps, "store" | "clock" | "random">;

/** The same rules as a dashboard login's: an email, and a password of 10 to 200 characters. */
export const createOperatorBody = createUserBody;
export const resetOperatorPasswordBody = t.Object(
  { password: createUserBody.properties.password },
  { additionalProperties: false },
);

/** What is shown of an operator: never the password's hash. */
export const operatorView = (o: Operator) => ({ id: o.id, email: o.email, created_at: iso(o.createdAt) });

/** The audit entry of a change to an operator: theirs, in no account. */
const operatorEntry = (
  deps: OperatorDeps,
  by: AuditContext,
  action: "operator.create" | "operator.delete" | "operator.reset_password",
  id: string,
  changes: Record<string, [unknown, unknown]>,
) => auditEntry(deps, by, action, { kind: "operator", id }, null, changes);

export async function createOperator(
  deps: OperatorDeps,
  input: typeof createOperatorBody.static,
  by: AuditContext,
): Promise<Operator> {
  const taken = () => new AppError("conflict", `An operator with email ${input.email} already exists.`);
  // Checked first to spare the hash; the insert decides when two creations of one email run at once.
  if (await deps.store.operators.byEmail(input.email)) throw taken();
  const id = randomId(deps.random, "opr");
  const email = input.email.toLowerCase();
  const operator = await deps.store.operators.create(
    { id, email, passwordHash: await hashPassword(input.password), createdAt: deps.clock.now() },
    operatorEntry(deps, by, "operator.create", id, changesOf(null, { email })),
  );
  if (!operator) throw taken();
  return operator;
}

export const listOperators = (deps: OperatorDeps) => deps.store.operators.list();

/** An operator named by id or by email; 404 otherwise. */
export async function getOperator(deps: OperatorDeps, idOrEmail: string): Promise<Operator> {
  const operator =
    (await deps.store.operators.byId(idOrEmail)) ??
    (idOrEmail.includes("@") ? await deps.store.operators.byEmail(idOrEmail) : undefined);
  if (!operator) throw new AppError("not_found", `No operator ${idOrEmail}.`);
  return operator;
}

/** Deletes an operator; their sessions end with them. */
export async function deleteOperator(deps: OperatorDeps, idOrEmail: string, by: AuditContext): Promise<Operator> {
  const operator = await getOperator(deps, idOrEmail);
  const entry = operatorEntry(deps, by, "operator.delete", operator.id, removedOf({ email: operator.email }));
  if (!(await deps.store.operators.delete(operator.id, entry)))
    throw new AppError("not_found", `No operator ${idOrEmail}.`);
  return operator;
}

/** Sets a new password; every session the operator had is ended, so a leaked one stops working. */
export async function resetOperatorPassword(
  deps: OperatorDeps,
  idOrEmail: string,
  input: typeof resetOperatorPasswordBody.static,
  by: AuditContext,
): Promise<Operator> {
  const operator = await getOperator(deps, idOrEmail);
  const entry = operatorEntry(deps, by, "operator.reset_password", operator.id, {
    password: [SECRET_BEFORE, SECRET_CHANGED],
  });
  if (!(await deps.store.operators.setPasswordHash(operator.id, await hashPassword(input.password), entry)))
    throw new AppError("not_found", `No operator ${idOrEmail}.`);
  return operator;
}
