import { Elysia, t } from "elysia";
import { auditQuery, auditView, listAudit } from "../audit/queries.ts";
import type { Deps } from "../deps.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { createAccount, createUser, getAccount, listAccounts, updateAccount } from "../accounts/accounts.ts";
import { deleteUser, listUsers, resetPasswordBody, resetUserPassword } from "../accounts/logins.ts";
import { createApiKey, revokeApiKey } from "../accounts/keys.ts";
import { createAccountBody, createApiKeyBody, createUserBody, updateAccountBody } from "../accounts/schemas.ts";
import { accountView, apiKeyView, userView } from "../accounts/views.ts";
import { createNumber, getNumber, syncNumber, updateNumber } from "../numbers/numbers.ts";
import { createNumberBody, createWabaBody, updateNumberBody, updateWabaBody } from "../numbers/schemas.ts";
import { numberView, wabaView } from "../numbers/views.ts";
import { createWaba, getWaba, updateWaba } from "../numbers/wabas.ts";
import { usage, usageQuery, usageView } from "../requests/queries.ts";
import { usageCsvResponse, usageReportQuery } from "../requests/usage-report.ts";
import { adminAccess } from "../operators/admin-access.ts";
import { deleteOnboarding, listOnboardings, onboardingQuery, onboardingView } from "../onboarding/operator.ts";

/** The operator API (docs/operations.md#provisioning): thin routes over the accounts/ and numbers/ operations. */
export function adminRoutes(deps: Deps) {
  const detail = { tags: ["Operator API"], security: [{ adminToken: [] }] };
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
      .get(
        "/usage",
        async ({ query }) => {
          if (query.account_id) getAccount(deps, query.account_id);
          return { data: (await usage(deps, query.account_id || null, query.from, query.to)).map(usageView) };
        },
        {
          query: usageQuery,
          detail: {
            ...detail,
            summary:
              "Proxied calls per hour per number (or WABA) of one account or all: forwarded by allow-list row, upstream errors by code, our refusals by code; from and to are ISO 8601 times",
          },
        },
      )
      .get("/usage.csv", ({ query }) => usageCsvResponse(deps, query), {
        query: usageReportQuery,
        detail: {
          ...detail,
          summary:
            "Usage for billing as CSV: one row per account, number (or WABA), UTC day, kind and label; from (default: the start of this month) and to are ISO 8601 dates or times",
        },
      })
      .post(
        "/accounts",
        async ({ body, by, set }) => {
          set.status = 201;
          return accountView(await createAccount(deps, body, by));
        },
        { body: createAccountBody, detail: { ...detail, summary: "Create an account" } },
      )
      .get("/accounts", () => ({ data: listAccounts(deps).map(accountView) }), {
        detail: { ...detail, summary: "Every account, oldest first" },
      })
      .get("/accounts/:id", ({ params }) => accountView(getAccount(deps, params.id)), {
        detail: { ...detail, summary: "Read an account" },
      })
      .patch(
        "/accounts/:id",
        async ({ params, body, by }) => accountView(await updateAccount(deps, params.id, body, by)),
        {
          body: updateAccountBody,
          detail: { ...detail, summary: "Change an account's name, email, billing state, retention or plan allowance" },
        },
      )
      .post(
        "/accounts/:id/users",
        async ({ params, body, by, set }) => {
          const user = await createUser(deps, params.id, body, by);
          set.status = 201;
          return userView(user);
        },
        { body: createUserBody, detail: { ...detail, summary: "Create a dashboard login for an account" } },
      )
      .get("/accounts/:id/users", async ({ params }) => ({ data: (await listUsers(deps, params.id)).map(userView) }), {
        detail: { ...detail, summary: "An account's dashboard logins, oldest first, with their last sign-in" },
      })
      .post(
        "/users/:id/password",
        async ({ params, body, by, set }) => {
          await resetUserPassword(deps, params.id, body, by);
          set.status = 204;
        },
        {
          body: resetPasswordBody,
          detail: { ...detail, summary: "Give a dashboard login a new password; every session of it ends" },
        },
      )
      .delete(
        "/users/:id",
        async ({ params, by, set }) => {
          await deleteUser(deps, params.id, by);
          set.status = 204;
        },
        { detail: { ...detail, summary: "Remove a dashboard login; its sessions end" } },
      )
      .post(
        "/accounts/:id/api-keys",
        async ({ params, body, by, set }) => {
          const { key, record } = await createApiKey(deps, params.id, body, by);
          set.status = 201;
          return { ...apiKeyView(record), key };
        },
        {
          body: createApiKeyBody,
          detail: { ...detail, summary: "Create an API key (the key is shown only in this answer)" },
        },
      )
      .delete(
        "/api-keys/:id",
        async ({ params, by, set }) => {
          await revokeApiKey(deps, params.id, by);
          set.status = 204;
        },
        { detail: { ...detail, summary: "Revoke an API key" } },
      )
      .post(
        "/accounts/:id/wabas",
        async ({ params, body, by, set }) => {
          set.status = 201;
          return wabaView(await createWaba(deps, params.id, body, by));
        },
        { body: createWabaBody, detail: { ...detail, summary: "Connect a WABA with its upstream access token" } },
      )
      .get("/wabas/:waba_id", ({ params }) => wabaView(getWaba(deps, params.waba_id)), {
        detail: { ...detail, summary: "Read a WABA's connection state" },
      })
      .patch(
        "/wabas/:waba_id",
        async ({ params, body, by }) => wabaView(await updateWaba(deps, params.waba_id, body, by)),
        {
          body: updateWabaBody,
          detail: { ...detail, summary: "Change a WABA's state or access token" },
        },
      )
      .post(
        "/accounts/:id/numbers",
        async ({ params, body, by, set }) => {
          set.status = 201;
          return numberView(await createNumber(deps, params.id, body, by));
        },
        {
          body: createNumberBody,
          detail: { ...detail, summary: "Connect a number; its details are synced from upstream" },
        },
      )
      .get("/numbers/:phone_number_id", ({ params }) => numberView(getNumber(deps, params.phone_number_id)), {
        detail: { ...detail, summary: "Read a number's state and throughput level" },
      })
      .patch(
        "/numbers/:phone_number_id",
        async ({ params, body, by }) => numberView(await updateNumber(deps, params.phone_number_id, body, by)),
        {
          body: updateNumberBody,
          detail: { ...detail, summary: "Change a number's connection state" },
        },
      )
      .post(
        "/numbers/:phone_number_id/sync",
        async ({ params, by }) => numberView(await syncNumber(deps, params.phone_number_id, { check: true, by })),
        {
          detail: { ...detail, summary: "Re-read a number's details from upstream" },
        },
      )
      .get("/onboardings", async ({ query }) => ({ data: (await listOnboardings(deps, query)).map(onboardingView) }), {
        query: onboardingQuery,
        detail: {
          ...detail,
          summary:
            "Embedded Signup records not expired, newest first, by account and number: each signup's steps, account and expiry (never its code, token or PIN)",
        },
      })
      .delete(
        "/onboardings/:id",
        async ({ params, by }) => onboardingView(await deleteOnboarding(deps, params.id, by)),
        {
          params: t.Object({ id: t.String({ maxLength: 64 }) }),
          detail: {
            ...detail,
            summary:
              "Delete an Embedded Signup record (a stuck or unwanted signup): its number is free for other accounts again; answers the record as it was",
          },
        },
      )
      .get(
        "/accounts/:id/numbers",
        ({ params }) => {
          getAccount(deps, params.id);
          return { data: deps.store.directory.numbers(params.id).map(numberView) };
        },
        { params: t.Object({ id: t.String() }), detail: { ...detail, summary: "List an account's numbers" } },
      )
      .get(
        "/audit",
        async ({ query }) => {
          if (query.account_id) getAccount(deps, query.account_id);
          const page = await listAudit(deps, query);
          return { data: page.data.map(auditView), next_cursor: page.nextCursor };
        },
        {
          query: auditQuery,
          detail: {
            ...detail,
            summary:
              "The audit log, newest first: every change through the operator API, the CLI, the console, the dashboard and its API, and the service's automatic disables; who, what, which object, when, from where, and the fields before → after (never a secret). Filter by account_id, action (or a kind: endpoint), actor (id or email), object_kind and object_id, from and to (ISO 8601); page with next_cursor",
          },
        },
      )
  );
}
