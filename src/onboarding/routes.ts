import { Elysia, t } from "elysia";
import { requireSession } from "../auth/session-routes.ts";
import { optionalBody } from "../http/optional-body.ts";
import type { Deps } from "../deps.ts";
import type { RelayHandle } from "../webhooks/relay.ts";
import { coexistenceView, preflightBody, runPreflight, startSync, startSyncBody } from "./coexistence.ts";
import { accountOnboarding, retryBody, retrySignup, signupBody, signupView, startSignup } from "./signup.ts";

/** Embedded Signup and a coexistence number's syncs for scripts (issue 20): thin routes over signup.ts and coexistence.ts. */
export function onboardingRoutes(deps: Deps, relay: RelayHandle) {
  const tag = { tags: ["Dashboard API"] };
  const queued = { ...deps, queue: relay.dispatcher };
  const idParams = t.Object({ id: t.String({ maxLength: 64 }) });
  const numberParams = t.Object({ phone_number_id: t.String({ maxLength: 64 }) });
  return new Elysia({ prefix: "/api" })
    .use(requireSession(deps))
    .post(
      "/signups",
      async ({ accountId, body, by, set }) => {
        set.status = 201;
        return signupView(await startSignup(queued, accountId, body, await by()));
      },
      {
        body: signupBody,
        detail: {
          ...tag,
          summary:
            "Embedded Signup's server steps for what the signup popup reported: exchange the code, subscribe to the WABA's webhooks, register the number (not for coexistence), read it, store both; a failed step is in the answer's steps with why and what to do (status failed); signing up the same number again resumes, never duplicates; 409 plan_limit before anything is done",
        },
      },
    )
    .get(
      "/signups/:id",
      async ({ accountId, params }) => signupView(await accountOnboarding(deps, accountId, params.id)),
      {
        params: idParams,
        detail: { ...tag, summary: "A signup's steps and their outcomes" },
      },
    )
    .post(
      "/signups/:id/retry",
      async ({ accountId, params, body, by }) =>
        signupView(await retrySignup(queued, accountId, params.id, body, await by())),
      {
        params: idParams,
        ...optionalBody(retryBody),
        detail: { ...tag, summary: "Runs a failed signup again from the step that failed (optionally with a new PIN)" },
      },
    )
    .get(
      "/numbers/:phone_number_id/coexistence",
      ({ accountId, params }) => coexistenceView(deps, accountId, params.phone_number_id),
      {
        params: numberParams,
        detail: {
          ...tag,
          summary:
            "A coexistence number's one-time syncs: the 24-hour window, each sync's pre-flight by endpoint, and whether it was started",
        },
      },
    )
    .post(
      "/numbers/:phone_number_id/preflight",
      async ({ accountId, params, body, by, set }) => {
        set.status = 202;
        return runPreflight(queued, accountId, params.phone_number_id, body.sync_type, await by());
      },
      {
        params: numberParams,
        body: preflightBody,
        detail: {
          ...tag,
          summary:
            "Pre-flight (docs/webhooks.md#test-events): sends the proxy_test event to each enabled endpoint subscribed to the sync's field; GET …/coexistence shows each endpoint's result as it comes",
        },
      },
    )
    .post(
      "/numbers/:phone_number_id/smb-sync",
      async ({ accountId, params, body, by }) => startSync(queued, accountId, params.phone_number_id, body, await by()),
      {
        params: numberParams,
        body: startSyncBody,
        detail: {
          ...tag,
          summary:
            "Starts a coexistence sync (contacts or chat history) upstream: once, within 24 hours of onboarding, after an endpoint passed the pre-flight (409 preflight_required) unless override is true",
        },
      },
    );
}
