import { literals } from "../http/literals.ts";
import { RETENTIONS } from "../store/vocabulary.ts";
import { Elysia, t } from "elysia";
import { accountNumberView } from "../account-api/views.ts";
import { updateAccount } from "../accounts/accounts.ts";
import { createApiKey, revokeApiKey } from "../accounts/keys.ts";
import { createApiKeyBody } from "../accounts/schemas.ts";
import { AppError } from "../errors/catalog.ts";
import { connectByoNumber, connectNumberBody, resyncNumber } from "../numbers/connect.ts";
import { signupBody, signupView, startSignup } from "../onboarding/signup.ts";
import { signupHeaders, signupSettings } from "./onboarding-pages.tsx";
import type { RelayHandle } from "../webhooks/relay.ts";
import type { Deps } from "../deps.ts";
import { Notice } from "../html/components.tsx";
import { formFields, readForm } from "../html/form.ts";
import { guarded, page, pathId, type PageHandler, type Viewer } from "./guard.tsx";
import type { PhoneNumber } from "../store/types.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import { ApiKeysPage, type ApiKeysPageProps } from "./pages/api-keys.tsx";
import { NotificationsPage } from "./pages/notifications.tsx";
import { NumbersPage, type NumbersPageProps } from "./pages/numbers.tsx";
import { SettingsPage } from "./pages/settings.tsx";
import type { FormState } from "../html/form-fields.tsx";
import { changeOwnPassword, changePasswordBody } from "../account-api/password.ts";
import { sessionToken } from "../auth/session-routes.ts";
import { numberUsage, USAGE_WINDOW_MS } from "../html/usage.ts";

const settingsBody = t.Object({ retention: literals(RETENTIONS) });

/** What the settings page says after a save (`?saved=`). */
const SAVED: Record<string, string> = {
  "1": "Settings saved.",
  password: "Your password is changed; your other sessions are signed out.",
};

async function numbersPage(deps: Deps, viewer: Viewer, extra: Partial<NumbersPageProps> = {}, status = 200) {
  const now = deps.clock.now();
  const counts = await deps.store.requests.usage(
    viewer.accountId,
    now - USAGE_WINDOW_MS - 24 * 3_600_000,
    now + 3_600_000,
  );
  return htmlResponse(
    page(
      viewer,
      "Numbers",
      "numbers",
      NumbersPage({
        numbers: deps.store.directory.numbers(viewer.accountId).map((n) => accountNumberView(deps, n)),
        usage: numberUsage(counts, now),
        now,
        signup: signupSettings(deps.config),
        unfinished: (await deps.store.onboardings.unfinished(viewer.accountId, now)).map(signupView),
        ...extra,
      }),
    ),
    status,
    signupHeaders(deps.config),
  );
}

const keysPage = (deps: Deps, viewer: Viewer, extra: Partial<ApiKeysPageProps> = {}, status = 200) =>
  htmlResponse(
    page(
      viewer,
      "API keys",
      "api-keys",
      ApiKeysPage({
        keys: deps.store.directory.apiKeys(viewer.accountId).sort((a, b) => b.createdAt - a.createdAt),
        now: deps.clock.now(),
        ...extra,
      }),
    ),
    status,
  );

const settingsPage = (viewer: Viewer, extra: { flash?: JSX.Element; passwordForm?: FormState }, status = 200) =>
  htmlResponse(
    page(viewer, "Settings", "settings", SettingsPage({ retention: viewer.account.retention, ...extra })),
    status,
  );

/** What the numbers page says after a connect or a check (`?done=…&number=…`) of one of the viewer's numbers. */
function numbersFlash(number: PhoneNumber, done: string | undefined): JSX.Element | undefined {
  if (done === "connected")
    return (
      <Notice tone="ok">
        <p>
          Number <strong safe>{number.displayPhoneNumber ?? number.phoneNumberId}</strong> is connected.
        </p>
      </Notice>
    );
  if (done !== "synced") return undefined;
  return number.syncError ? (
    <Notice tone="warn">
      <p>
        The check of <strong safe>{number.phoneNumberId}</strong> failed: <span safe>{number.syncError}</span>
      </p>
    </Notice>
  ) : (
    <Notice tone="ok">
      <p>
        Checked <strong safe>{number.displayPhoneNumber ?? number.phoneNumberId}</strong>: throughput level{" "}
        {number.throughputLevel}.
      </p>
    </Notice>
  );
}

const showNumbers =
  (deps: Deps): PageHandler =>
  ({ query }, viewer) => {
    const number = query.number ? deps.store.directory.number(query.number) : undefined;
    const mine = number && number.accountId === viewer.accountId ? number : undefined;
    return numbersPage(deps, viewer, { flash: mine && numbersFlash(mine, query.done) });
  };

const connectNumber =
  (deps: Deps): PageHandler =>
  async ({ body }, viewer) => {
    const form = readForm(connectNumberBody, body);
    if (!form.ok) return numbersPage(deps, viewer, { form: { values: form.raw, errors: form.errors } }, 400);
    try {
      const number = await connectByoNumber(deps, viewer.accountId, form.value, viewer.by);
      return seeOther(`/dashboard/numbers?done=connected&number=${encodeURIComponent(number.phoneNumberId)}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return numbersPage(
        deps,
        viewer,
        { form: { values: form.value, errors: {}, message: error.message } },
        error.status,
      );
    }
  };

const signUpNumber =
  (deps: Deps, relay: RelayHandle): PageHandler =>
  async ({ body }, viewer) => {
    // The popup's session information and the page's choices; `mode` only steers the page's script.
    const { mode: _mode, coexistence, ...rest } = formFields(body);
    const form = readForm(signupBody, { ...rest, coexistence: coexistence === "true" });
    if (!form.ok) {
      const problem = Object.entries(form.errors)
        .map(([field, message]) => `${field}: ${message}`)
        .join("; ");
      return numbersPage(
        deps,
        viewer,
        { signupMessage: `The signup did not report what it should (${problem}). Nothing was saved; connect again.` },
        400,
      );
    }
    try {
      const o = await startSignup({ ...deps, queue: relay.dispatcher }, viewer.accountId, form.value, viewer.by);
      return seeOther(`/dashboard/numbers/signups/${encodeURIComponent(o.id)}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return numbersPage(deps, viewer, { signupMessage: error.message }, error.status);
    }
  };

const syncNumber =
  (deps: Deps): PageHandler =>
  async ({ params }, viewer) => {
    const number = await resyncNumber(deps, viewer.accountId, pathId(params), viewer.by);
    return seeOther(`/dashboard/numbers?done=synced&number=${encodeURIComponent(number.phoneNumberId)}`);
  };

const showKeys =
  (deps: Deps): PageHandler =>
  ({ query }, viewer) => {
    const key = query.revoked ? deps.store.directory.apiKey(query.revoked) : undefined;
    const flash =
      key && key.accountId === viewer.accountId ? (
        <Notice tone="ok">
          <p>
            Key{" "}
            <span class="mono" safe>
              {key.prefix}
            </span>
            … is revoked.
          </p>
        </Notice>
      ) : undefined;
    return keysPage(deps, viewer, { flash });
  };

const createKey =
  (deps: Deps): PageHandler =>
  async ({ body }, viewer) => {
    const form = readForm(createApiKeyBody, body);
    if (!form.ok) return keysPage(deps, viewer, { errors: form.errors }, 400);
    // Answered directly (no redirect): the key exists only in this response.
    return keysPage(deps, viewer, { created: await createApiKey(deps, viewer.accountId, form.value, viewer.by) }, 201);
  };

const revokeKey =
  (deps: Deps): PageHandler =>
  async ({ params }, viewer) => {
    const key = await revokeApiKey(deps, pathId(params), viewer.by, viewer.accountId);
    return seeOther(`/dashboard/api-keys?revoked=${encodeURIComponent(key.id)}`);
  };

const showSettings: PageHandler = ({ query }, viewer) => {
  const saved = SAVED[query.saved ?? ""];
  const flash = saved ? (
    <Notice tone="ok">
      <p safe>{saved}</p>
    </Notice>
  ) : undefined;
  return settingsPage(viewer, { flash });
};

const changePassword =
  (deps: Deps): PageHandler =>
  async (ctx, viewer) => {
    const form = readForm(changePasswordBody, ctx.body);
    if (!form.ok) return settingsPage(viewer, { passwordForm: { values: {}, errors: form.errors } }, 400);
    try {
      await changeOwnPassword(deps, viewer.userId, sessionToken(ctx.request) ?? "", form.value, viewer.by);
    } catch (error) {
      // The wrong current password is said beside its field; the rest (429) as a page.
      if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
      const errors = { current_password: "This is not your current password." };
      return settingsPage(viewer, { passwordForm: { values: {}, errors } }, 400);
    }
    return seeOther("/dashboard/settings?saved=password");
  };

const saveSettings =
  (deps: Deps): PageHandler =>
  async ({ body }, viewer) => {
    const form = readForm(settingsBody, body);
    if (!form.ok) throw new AppError("invalid_request", "Choose 24 hours or 7 days.");
    await updateAccount(deps, viewer.accountId, { retention: form.value.retention }, viewer.by, "settings.update");
    return seeOther("/dashboard/settings?saved=1");
  };

const showNotifications =
  (deps: Deps): PageHandler =>
  async (_ctx, viewer) =>
    page(
      viewer,
      "Notifications",
      "notifications",
      NotificationsPage({
        notifications: await deps.store.notifications.list(viewer.accountId),
        now: deps.clock.now(),
        accountEmail: viewer.account.email,
      }),
    );

const detail = { hide: true };

/** Numbers, API keys, settings and notifications pages: thin handlers over the account API's plain functions. */
export function accountPages(deps: Deps, relay: RelayHandle) {
  return new Elysia()
    .get("/numbers", guarded(deps, showNumbers(deps)), { detail })
    .post("/numbers", guarded(deps, connectNumber(deps)), { detail })
    .post("/numbers/signup", guarded(deps, signUpNumber(deps, relay)), { detail })
    .post("/numbers/:id/sync", guarded(deps, syncNumber(deps)), { detail })
    .get("/api-keys", guarded(deps, showKeys(deps)), { detail })
    .post("/api-keys", guarded(deps, createKey(deps)), { detail })
    .post("/api-keys/:id/revoke", guarded(deps, revokeKey(deps)), { detail })
    .get("/settings", guarded(deps, showSettings), { detail })
    .post("/settings/password", guarded(deps, changePassword(deps)), { detail })
    .post("/settings", guarded(deps, saveSettings(deps)), { detail })
    .get("/notifications", guarded(deps, showNotifications(deps)), { detail });
}
