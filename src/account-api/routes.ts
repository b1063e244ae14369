import { Elysia, t } from "elysia";
import { createApiKey, revokeApiKey } from "../accounts/keys.ts";
import { updateAccount } from "../accounts/accounts.ts";
import { createApiKeyBody, settingsBody } from "../accounts/schemas.ts";
import { apiKeyView } from "../accounts/views.ts";
import { requireSession, sessionToken } from "../auth/session-routes.ts";
import { connectByoNumber, connectNumberBody, resyncNumber } from "../numbers/connect.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import { changeOwnPassword, changePasswordBody } from "./password.ts";
import { accountNumberView, notificationView } from "./views.ts";

/**
 * The account's own numbers, API keys, settings and notifications (docs/operations.md#the-dashboard-and-its-api): thin routes
 * over the same plain functions the operator API and the dashboard pages call, scoped to the session's account.
 */
export function accountApiRoutes(deps: Deps) {
  const detail = (summary: string) => ({ tags: ["Dashboard API"], summary });
  const phoneParams = t.Object({ phone_number_id: t.String() });
  return new Elysia({ prefix: "/api" })
    .use(requireSession(deps))
    .get(
      "/numbers",
      ({ accountId }) => ({
        data: deps.store.directory.numbers(accountId).map((n) => accountNumberView(deps, n)),
      }),
      { detail: detail("The account's numbers with condition, throughput level and rate limit") },
    )
    .post(
      "/numbers",
      async ({ accountId, body, by, set }) => {
        const number = await connectByoNumber(deps, accountId, body, await by());
        set.status = 201;
        return accountNumberView(deps, number);
      },
      {
        body: connectNumberBody,
        detail: detail("Connect (or reconnect) a bring-your-own number; the credentials are checked upstream first"),
      },
    )
    .post(
      "/numbers/:phone_number_id/sync",
      async ({ accountId, params, by }) =>
        accountNumberView(deps, await resyncNumber(deps, accountId, params.phone_number_id, await by())),
      {
        params: phoneParams,
        detail: detail(
          "Check again: re-read a number's details (throughput level) from upstream with its WABA's token; a good read connects a WABA whose token was revoked and a restricted, flagged or unregistered number again, an upstream error sets its state with its cause",
        ),
      },
    )
    .get(
      "/api-keys",
      ({ accountId }) => ({
        data: deps.store.directory
          .apiKeys(accountId)
          .sort((a, b) => b.createdAt - a.createdAt)
          .map(apiKeyView),
      }),
      { detail: detail("The account's API keys (prefix and times, never the key)") },
    )
    .post(
      "/api-keys",
      async ({ accountId, body, by, set }) => {
        const { key, record } = await createApiKey(deps, accountId, body, await by());
        set.status = 201;
        return { ...apiKeyView(record), key };
      },
      { body: createApiKeyBody, detail: detail("Create an API key (the key is shown only in this answer)") },
    )
    .delete(
      "/api-keys/:id",
      async ({ accountId, params, by, set }) => {
        await revokeApiKey(deps, params.id, await by(), accountId);
        set.status = 204;
      },
      { params: t.Object({ id: t.String() }), detail: detail("Revoke an API key") },
    )
    .get(
      "/settings",
      ({ accountId }) => ({
        retention: orNotFound(deps.store.directory.account(accountId), `account ${accountId}`).retention,
      }),
      { detail: detail("The account's settings: delivery retention (24h or 7d)") },
    )
    .patch(
      "/settings",
      async ({ accountId, body, by }) => {
        const account = await updateAccount(
          deps,
          accountId,
          { retention: body.retention },
          await by(),
          "settings.update",
        );
        return { retention: account.retention };
      },
      { body: settingsBody, detail: detail("Change delivery retention (24h or 7d)") },
    )
    .post(
      "/password",
      async ({ userId, body, by, request, set }) => {
        await changeOwnPassword(deps, userId, sessionToken(request) ?? "", body, await by());
        set.status = 204;
      },
      {
        body: changePasswordBody,
        detail: detail(
          "Change the signed-in user's own password (the current one is required); every other session of theirs ends",
        ),
      },
    )
    .get(
      "/notifications",
      async ({ accountId }) => ({
        data: (await deps.store.notifications.list(accountId)).map(notificationView),
      }),
      { detail: detail("Warning and disable emails sent to the account") },
    );
}
