import { Elysia } from "elysia";
import { accountNumberView } from "../account-api/views.ts";
import type { Config } from "../config/config.ts";
import { AppError } from "../errors/catalog.ts";
import { accountNumber } from "../numbers/connect.ts";
import { coexistenceView, preflightBody, runPreflight, startSync, startSyncBody } from "../onboarding/coexistence.ts";
import { accountOnboarding, retryBody, retrySignup, signupView } from "../onboarding/signup.ts";
import type { Deps } from "../deps.ts";
import { Notice } from "../html/components.tsx";
import { formFields, readForm } from "../html/form.ts";
import { guarded, page, pathId, type Viewer } from "./guard.tsx";
import { contentSecurityPolicy } from "../http/security-headers.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import { CoexistencePage } from "./pages/coexistence.tsx";
import { SignupPage, type SignupSettings } from "./pages/signup.tsx";
import type { RelayHandle } from "../webhooks/relay.ts";

/** The Numbers page's signup settings, when Embedded Signup is on. */
export function signupSettings(config: Config): SignupSettings | undefined {
  const signup = config.embeddedSignup;
  if (!signup) return undefined;
  return {
    appId: signup.appId,
    configId: signup.configId,
    sdkUrl: signup.sdkUrl,
    origins: signup.origins.join(" "),
    version: config.upstreamApiVersion,
    coexistenceFeature: `${config.platform.product}_business_app_onboarding`,
  };
}

/**
 * The Numbers page's headers with Embedded Signup on: the platform's SDK may load and frame from
 * its origins, and the page keeps its handle on the popup it opens (a same-origin opener policy
 * would cut the popup off from the page it reports to).
 */
export function signupHeaders(config: Config): Record<string, string> {
  const origins = config.embeddedSignup?.origins.join(" ");
  if (!origins) return {};
  return {
    "content-security-policy": contentSecurityPolicy({
      "script-src": `'self' ${origins}`,
      "frame-src": origins,
      "connect-src": `'self' ${origins}`,
    }),
    "cross-origin-opener-policy": "same-origin-allow-popups",
  };
}

/** A signup's steps, and a coexistence number's syncs: thin handlers over src/onboarding. */
export function onboardingPages(deps: Deps, relay: RelayHandle) {
  const queued = { ...deps, queue: relay.dispatcher };
  const coexistencePage = async (viewer: Viewer, phoneNumberId: string, flash?: JSX.Element, status = 200) => {
    const number = accountNumberView(deps, accountNumber(deps, viewer.accountId, phoneNumberId));
    const view = await coexistenceView(deps, viewer.accountId, phoneNumberId);
    const name = number.display_phone_number ?? number.phone_number_id;
    return htmlResponse(
      page(viewer, `Sync ${name}`, "numbers", CoexistencePage({ name, view, now: deps.clock.now(), flash })),
      status,
    );
  };
  /** A sync action's refusal is shown on the page it came from, in words. */
  const orRefusal = async (viewer: Viewer, phoneNumberId: string, act: () => Promise<unknown>, done: string) => {
    try {
      await act();
      return seeOther(`/dashboard/numbers/${encodeURIComponent(phoneNumberId)}/coexistence?done=${done}`);
    } catch (error) {
      if (!(error instanceof AppError) || error.status === 404) throw error;
      return coexistencePage(
        viewer,
        phoneNumberId,
        <Notice tone="bad">
          <p safe>{error.message}</p>
        </Notice>,
        error.status,
      );
    }
  };

  return new Elysia()
    .get(
      "/numbers/signups/:id",
      guarded(deps, async ({ params }, viewer) =>
        page(
          viewer,
          "Connecting a number",
          "numbers",
          SignupPage({
            signup: signupView(await accountOnboarding(deps, viewer.accountId, pathId(params))),
            now: deps.clock.now(),
          }),
        ),
      ),
      { detail: { hide: true } },
    )
    .post(
      "/numbers/signups/:id/retry",
      guarded(deps, async ({ params, body }, viewer) => {
        const form = readForm(retryBody, body);
        if (!form.ok) throw new AppError("invalid_request", "The PIN is 6 digits.");
        const o = await retrySignup(queued, viewer.accountId, pathId(params), form.value, viewer.by);
        return seeOther(`/dashboard/numbers/signups/${encodeURIComponent(o.id)}`);
      }),
      { detail: { hide: true } },
    )
    .get(
      "/numbers/:id/coexistence",
      guarded(deps, ({ params, query }, viewer) => {
        const flash =
          query.done === "preflight" ? (
            <Notice tone="ok">
              <p>Pre-flight sent: each endpoint's answer shows below as it comes.</p>
            </Notice>
          ) : query.done === "sync" ? (
            <Notice tone="ok">
              <p>The platform is sending it: watch your endpoints and the Deliveries page.</p>
            </Notice>
          ) : undefined;
        return coexistencePage(viewer, pathId(params), flash);
      }),
      { detail: { hide: true } },
    )
    .post(
      "/numbers/:id/preflight",
      guarded(deps, async ({ params, body }, viewer) => {
        const form = readForm(preflightBody, body);
        if (!form.ok) throw new AppError("invalid_request", "Choose contacts or chat history.");
        return orRefusal(
          viewer,
          pathId(params),
          () => runPreflight(queued, viewer.accountId, pathId(params), form.value.sync_type, viewer.by),
          "preflight",
        );
      }),
      { detail: { hide: true } },
    )
    .post(
      "/numbers/:id/smb-sync",
      guarded(deps, async ({ params, body }, viewer) => {
        const { confirm: _confirm, override, ...rest } = formFields(body);
        const form = readForm(startSyncBody, { ...rest, override: override === "true" });
        if (!form.ok) throw new AppError("invalid_request", "Choose contacts or chat history.");
        return orRefusal(
          viewer,
          pathId(params),
          () => startSync(queued, viewer.accountId, pathId(params), form.value, viewer.by),
          "sync",
        );
      }),
      { detail: { hide: true } },
    );
}
