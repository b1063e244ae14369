import { Elysia, t } from "elysia";
import type { AuditContext } from "../audit/entry.ts";
import { auditQuery, auditView, listAudit, type AuditQuery } from "../audit/queries.ts";
import type { Deps } from "../deps.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import type { RouteContext } from "../http/route-context.ts";
import { createAccount, createUser, getAccount, listAccounts, updateAccount } from "../accounts/accounts.ts";
import { deleteUser, listUsers, resetPasswordBody, resetUserPassword } from "../accounts/logins.ts";
import { createApiKey, revokeApiKey } from "../accounts/keys.ts";
import {
  createAccountBody,
  createApiKeyBody,
  createUserBody,
  updateAccountBody,
  type CreateAccountInput,
  type CreateApiKeyInput,
  type CreateUserInput,
  type UpdateAccountInput,
} from "../accounts/schemas.ts";
import { accountView, apiKeyView, userView } from "../accounts/views.ts";
import { createNumber, getNumber, syncNumber, updateNumber } from "../numbers/numbers.ts";
import {
  createNumberBody,
  createWabaBody,
  updateNumberBody,
  updateWabaBody,
  type CreateNumberInput,
  type CreateWabaInput,
  type UpdateNumberInput,
  type UpdateWabaInput,
} from "../numbers/schemas.ts";
import { numberView, wabaView } from "../numbers/views.ts";
import { createWaba, getWaba, updateWaba } from "../numbers/wabas.ts";
import { usage, usageQuery, usageView } from "../requests/queries.ts";
import { usageCsvResponse, usageReportQuery } from "../requests/usage-report.ts";
import { adminAccess } from "../operators/admin-access.ts";
import { deleteOnboarding, listOnboardings, onboardingQuery, onboardingView } from "../onboarding/operator.ts";

/** A change through the operator API: who makes it, for the audit log. */
type Change<Params = Record<string, string>, Body = unknown> = Pick<
  RouteContext<Params, Body>,
  "params" | "body" | "set"
> & {
  by: AuditContext;
};
type Id = { id: string };

const readUsage =
  (deps: Deps) =>
  async ({ query }: { query: typeof usageQuery.static }) => {
    if (query.account_id) getAccount(deps, query.account_id);
    return { data: (await usage(deps, query.account_id || null, query.from, query.to)).map(usageView) };
  };

const addAccount =
  (deps: Deps) =>
  async ({ body, by, set }: Change<unknown, CreateAccountInput>) => {
    set.status = 201;
    return accountView(await createAccount(deps, body, by));
  };

const changeAccount =
  (deps: Deps) =>
  async ({ params, body, by }: Change<Id, UpdateAccountInput>) =>
    accountView(await updateAccount(deps, params.id, body, by));

const addUser =
  (deps: Deps) =>
  async ({ params, body, by, set }: Change<Id, CreateUserInput>) => {
    const user = await createUser(deps, params.id, body, by);
    set.status = 201;
    return userView(user);
  };

const readUsers =
  (deps: Deps) =>
  async ({ params }: { params: Id }) => ({
    data: (await listUsers(deps, params.id)).map(userView),
  });

const resetPassword =
  (deps: Deps) =>
  async ({ params, body, by, set }: Change<Id, typeof resetPasswordBody.static>) => {
    await resetUserPassword(deps, params.id, body, by);
    set.status = 204;
  };

const removeUser =
  (deps: Deps) =>
  async ({ params, by, set }: Change<Id>) => {
    await deleteUser(deps, params.id, by);
    set.status = 204;
  };

const addApiKey =
  (deps: Deps) =>
  async ({ params, body, by, set }: Change<Id, CreateApiKeyInput>) => {
    const { key, record } = await createApiKey(deps, params.id, body, by);
    set.status = 201;
    return { ...apiKeyView(record), key };
  };

const revokeKey =
  (deps: Deps) =>
  async ({ params, by, set }: Change<Id>) => {
    await revokeApiKey(deps, params.id, by);
    set.status = 204;
  };

const addWaba =
  (deps: Deps) =>
  async ({ params, body, by, set }: Change<Id, CreateWabaInput>) => {
    set.status = 201;
    return wabaView(await createWaba(deps, params.id, body, by));
  };

const changeWaba =
  (deps: Deps) =>
  async ({ params, body, by }: Change<{ waba_id: string }, UpdateWabaInput>) =>
    wabaView(await updateWaba(deps, params.waba_id, body, by));

const addNumber =
  (deps: Deps) =>
  async ({ params, body, by, set }: Change<Id, CreateNumberInput>) => {
    set.status = 201;
    return numberView(await createNumber(deps, params.id, body, by));
  };

type NumberId = { phone_number_id: string };

const changeNumber =
  (deps: Deps) =>
  async ({ params, body, by }: Change<NumberId, UpdateNumberInput>) =>
    numberView(await updateNumber(deps, params.phone_number_id, body, by));

const resync =
  (deps: Deps) =>
  async ({ params, by }: Change<NumberId>) =>
    numberView(await syncNumber(deps, params.phone_number_id, { check: true, by }));

const readOnboardings =
  (deps: Deps) =>
  async ({ query }: { query: typeof onboardingQuery.static }) => ({
    data: (await listOnboardings(deps, query)).map(onboardingView),
  });

const removeOnboarding =
  (deps: Deps) =>
  async ({ params, by }: Change<Id>) =>
    onboardingView(await deleteOnboarding(deps, params.id, by));

const readNumbers =
  (deps: Deps) =>
  ({ params }: { params: Id }) => {
    getAccount(deps, params.id);
    return { data: deps.store.directory.numbers(params.id).map(numberView) };
  };

const readAudit =
  (deps: Deps) =>
  async ({ query }: { query: AuditQuery }) => {
    if (query.account_id) getAccount(deps, query.account_id);
    const page = await listAudit(deps, query);
    return { data: page.data.map(auditView), next_cursor: page.nextCursor };
  };

const SUMMARY = {
  usage:
    "Proxied calls per hour per number (or WABA) of one account or all: forwarded by allow-list row, upstream errors by code, our refusals by code; from and to are ISO 8601 times",
  usageCsv:
    "Usage for billing as CSV: one row per account, number (or WABA), UTC day, kind and label; from (default: the start of this month) and to are ISO 8601 dates or times",
  onboardings:
    "Embedded Signup records not expired, newest first, by account and number: each signup's steps, account and expiry (never its code, token or PIN)",
  deleteOnboarding:
    "Delete an Embedded Signup record (a stuck or unwanted signup): its number is free for other accounts again; answers the record as it was",
  audit:
    "The audit log, newest first: every change through the operator API, the CLI, the console, the dashboard and its API, and the service's automatic disables; who, what, which object, when, from where, and the fields before → after (never a secret). Filter by account_id, action (or a kind: endpoint), actor (id or email), object_kind and object_id, from and to (ISO 8601); page with next_cursor",
};

/** The operator API (docs/operations.md#provisioning): thin routes over the accounts/ and numbers/ operations. */
export function adminRoutes(deps: Deps) {
  const doc = (summary: string) => ({ tags: ["Operator API"], security: [{ adminToken: [] }], summary });
  return (
    new Elysia({ prefix: "/admin" })
      // A transform hook runs before body validation, so an unauthenticated caller learns nothing about the schema.
      // `by`: who makes the changes, for the audit log (ADMIN_TOKEN's holder or a signed-in operator), from the
      // request's address.
      .derive(async (context) => ({
        by: await adminAccess(
          deps,
          context.request,
          clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived),
        ),
      }))
      .get("/usage", readUsage(deps), { query: usageQuery, detail: doc(SUMMARY.usage) })
      .get("/usage.csv", ({ query }) => usageCsvResponse(deps, query), {
        query: usageReportQuery,
        detail: doc(SUMMARY.usageCsv),
      })
      .post("/accounts", addAccount(deps), { body: createAccountBody, detail: doc("Create an account") })
      .get("/accounts", () => ({ data: listAccounts(deps).map(accountView) }), {
        detail: doc("Every account, oldest first"),
      })
      .get("/accounts/:id", ({ params }) => accountView(getAccount(deps, params.id)), {
        detail: doc("Read an account"),
      })
      .patch("/accounts/:id", changeAccount(deps), {
        body: updateAccountBody,
        detail: doc("Change an account's name, email, billing state, retention or plan allowance"),
      })
      .post("/accounts/:id/users", addUser(deps), {
        body: createUserBody,
        detail: doc("Create a dashboard login for an account"),
      })
      .get("/accounts/:id/users", readUsers(deps), {
        detail: doc("An account's dashboard logins, oldest first, with their last sign-in"),
      })
      .post("/users/:id/password", resetPassword(deps), {
        body: resetPasswordBody,
        detail: doc("Give a dashboard login a new password; every session of it ends"),
      })
      .delete("/users/:id", removeUser(deps), { detail: doc("Remove a dashboard login; its sessions end") })
      .post("/accounts/:id/api-keys", addApiKey(deps), {
        body: createApiKeyBody,
        detail: doc("Create an API key (the key is shown only in this answer)"),
      })
      .delete("/api-keys/:id", revokeKey(deps), { detail: doc("Revoke an API key") })
      .post("/accounts/:id/wabas", addWaba(deps), {
        body: createWabaBody,
        detail: doc("Connect a WABA with its upstream access token"),
      })
      .get("/wabas/:waba_id", ({ params }) => wabaView(getWaba(deps, params.waba_id)), {
        detail: doc("Read a WABA's connection state"),
      })
      .patch("/wabas/:waba_id", changeWaba(deps), {
        body: updateWabaBody,
        detail: doc("Change a WABA's state or access token"),
      })
      .post("/accounts/:id/numbers", addNumber(deps), {
        body: createNumberBody,
        detail: doc("Connect a number; its details are synced from upstream"),
      })
      .get("/numbers/:phone_number_id", ({ params }) => numberView(getNumber(deps, params.phone_number_id)), {
        detail: doc("Read a number's state and throughput level"),
      })
      .patch("/numbers/:phone_number_id", changeNumber(deps), {
        body: updateNumberBody,
        detail: doc("Change a number's connection state"),
      })
      .post("/numbers/:phone_number_id/sync", resync(deps), { detail: doc("Re-read a number's details from upstream") })
      .get("/onboardings", readOnboardings(deps), { query: onboardingQuery, detail: doc(SUMMARY.onboardings) })
      .delete("/onboardings/:id", removeOnboarding(deps), {
        params: t.Object({ id: t.String({ maxLength: 64 }) }),
        detail: doc(SUMMARY.deleteOnboarding),
      })
      .get("/accounts/:id/numbers", readNumbers(deps), {
        params: t.Object({ id: t.String() }),
        detail: doc("List an account's numbers"),
      })
      .get("/audit", readAudit(deps), { query: auditQuery, detail: doc(SUMMARY.audit) })
  );
}
