import { Elysia, t } from "elysia";
import { ACTION_KINDS, auditQuery, auditView, listAudit } from "../audit/queries.ts";
import type { Backups } from "../backup/backups.ts";
import { utcField } from "../html/format.ts";
import { Notice } from "../html/components.tsx";
import { readForm } from "../html/form.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import { NotFound } from "../html/not-found.tsx";
import { signInRoutes, type SignInDoor } from "../html/sign-in-routes.ts";
import { AppError } from "../errors/catalog.ts";
import { deleteUser, getUser, resetUserPassword } from "../accounts/logins.ts";
import { NUMBER_STATES } from "../numbers/condition.ts";
import { findOperator, OPERATOR_COOKIE, operatorSignIn, operatorSignOut } from "../operators/session.ts";
import type { Deps } from "../deps.ts";
import type { Operator } from "../store/operators.ts";
import { addUser, checkNumber, createAccountWithLogin, revokeKey, setBillingStatus } from "./actions.ts";
import { addUserForm, billingForm, checkForm, createAccountForm, resetPasswordForm } from "./forms.ts";
import { operatorOnly, type ConsoleHandler } from "./guard.ts";
import { consolePage } from "./layout.tsx";
import { AccountPage, type AccountPageProps } from "./pages/account.tsx";
import { AccountsPage } from "./pages/accounts.tsx";
import { AuditPage, type AuditPageFilter } from "./pages/audit.tsx";
import { NumbersPage } from "./pages/numbers.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { BackupsPage } from "./pages/backups.tsx";
import { backupState } from "./backup-report.ts";
import { recordedBackup } from "../backup/audit.ts";
import { UsagePage } from "./pages/usage.tsx";
import { accountPath, numberName } from "./pages/words.tsx";
import {
  accountDetail,
  accountRows,
  numbersAcross,
  overview,
  type NumberFilter,
  type NumberHealth,
} from "./reports.ts";
import { dailyUsage, dayText, usagePageQuery, usageTotals } from "../requests/usage-report.ts";

/** The operator console's sign-in: operators, their own cookie and sessions. */
function operatorDoor(deps: Deps): SignInDoor {
  return {
    home: "/operator",
    words: {
      action: "/operator/sign-in",
      heading: "Switchboard operator console",
      footnote: "Operators are created on the server with switchboard admin operators create.",
    },
    cookie: OPERATOR_COOKIE,
    signIn: async (email, password, ip) => (await operatorSignIn(deps, email, password, ip)).token,
    isSignedIn: async (token) => (await findOperator(deps, token)) !== null,
    signOut: (token, ip) => operatorSignOut(deps, token, ip),
  };
}

const accountsQuery = t.Object({ q: t.Optional(t.String({ maxLength: 200 })) });
const numbersQuery = t.Object({
  state: t.Optional(
    t.Union([t.Literal(""), t.Literal("unusable"), ...Object.keys(NUMBER_STATES).map((s) => t.Literal(s))]),
  ),
  cause: t.Optional(t.String({ maxLength: 20 })),
  checked: t.Optional(t.String({ maxLength: 64 })),
});
/** The Audit log page's query: the operator API's filters but the object's and the page size. */
const { account_id, actor, action, from, to, cursor } = auditQuery.properties;
const auditPageQuery = t.Object({ account_id, actor, action, from, to, cursor });
const detail = { hide: true };

/** What a check found, in words. */
function checkedFlash(h: NumberHealth | undefined): JSX.Element | undefined {
  if (!h) return undefined;
  const name = numberName(h.number);
  if (h.number.syncError)
    return (
      <Notice tone="warn">
        <p>
          The check of <strong safe>{name}</strong> failed: <span safe>{h.number.syncError}</span>
        </p>
      </Notice>
    );
  return (
    <Notice tone={h.condition.usable ? "ok" : "warn"}>
      <p>
        Checked <strong safe>{name}</strong>: <span safe>{h.condition.label}</span>.
      </p>
    </Notice>
  );
}

/**
 * The operator console at /operator (docs/operations.md#the-operator-console): server-rendered pages in the dashboard's frame and
 * under its CSP, over the console's reports and actions (which go through the operator API's
 * operations). Every page needs an operator session. `backups`: this server's (null where the
 * database is not a SQLite file), for the overview and the Backups page.
 */
export function consoleRoutes(deps: Deps, backups: Backups | null) {
  const page = (handler: ConsoleHandler) => operatorOnly(deps, handler);

  const overviewPage = page(async (_ctx, operator) =>
    consolePage(operator, "Overview", "overview", OverviewPage({ o: await overview(deps, backups) })),
  );

  const accountsPage = async (
    operator: Operator,
    search: string,
    extra: Partial<Parameters<typeof AccountsPage>[0]> = {},
    status = 200,
  ) =>
    htmlResponse(
      consolePage(
        operator,
        "Accounts",
        "accounts",
        AccountsPage({ rows: await accountRows(deps, search), search, ...extra }),
      ),
      status,
    );

  const accountPage = async (
    operator: Operator,
    id: string,
    query: Record<string, string | undefined>,
    extra: Partial<AccountPageProps> = {},
    status = 200,
  ) => {
    const d = await accountDetail(deps, id);
    let flash: JSX.Element | undefined;
    const ok = (text: string) => (
      <Notice tone="ok">
        <p safe>{text}</p>
      </Notice>
    );
    if (query.done === "created") flash = ok("The account and its first user are created.");
    if (query.done === "billing") flash = ok(`Billing status saved.`);
    if (query.done === "user") flash = ok("The user is added.");
    const user = d.users.find((u) => u.id === query.user);
    if (query.done === "password" && user) flash = ok(`${user.email} has a new password; their sessions are ended.`);
    if (query.done === "removed") flash = ok("The user is removed; their sessions are ended.");
    const revoked = d.keys.find((k) => k.id === query.revoked);
    if (revoked) flash = ok(`Key ${revoked.prefix}… is revoked.`);
    if (query.checked) flash = checkedFlash(d.numbers.find((n) => n.number.phoneNumberId === query.checked));
    return htmlResponse(
      consolePage(operator, d.account.name, "accounts", AccountPage({ detail: d, flash, ...extra })),
      status,
    );
  };

  return new Elysia({ prefix: "/operator" })
    .use(signInRoutes(operatorDoor(deps), deps.config.trustedProxies))
    .get("", overviewPage, { detail })
    .get("/", overviewPage, { detail })
    .get(
      "/accounts",
      page(async ({ query }, operator) => accountsPage(operator, query.q ?? "")),
      { query: accountsQuery, detail },
    )
    .post(
      "/accounts",
      page(async ({ body }, operator, by) => {
        const form = readForm(createAccountForm, body);
        if (!form.ok) return accountsPage(operator, "", { form: { values: form.raw, errors: form.errors } }, 400);
        try {
          const { account } = await createAccountWithLogin(deps, form.value, by);
          return seeOther(`${accountPath(account.id)}?done=created`);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return accountsPage(
            operator,
            "",
            { form: { values: form.value, errors: {}, message: error.message } },
            error.status,
          );
        }
      }),
      { detail },
    )
    .get(
      "/accounts/:account_id",
      page(async ({ params, query }, operator) => accountPage(operator, params.account_id ?? "", query)),
      { detail },
    )
    .post(
      "/accounts/:account_id/billing",
      page(async ({ params, body }, _operator, by) => {
        const id = params.account_id ?? "";
        const form = readForm(billingForm, body);
        if (!form.ok) throw new AppError("invalid_request", "Choose a billing status.");
        await setBillingStatus(deps, id, form.value.billing_status, by);
        return seeOther(`${accountPath(id)}?done=billing`);
      }),
      { detail },
    )
    .post(
      "/accounts/:account_id/users",
      page(async ({ params, body }, operator, by) => {
        const id = params.account_id ?? "";
        const form = readForm(addUserForm, body);
        if (!form.ok)
          return accountPage(operator, id, {}, { userForm: { values: form.raw, errors: form.errors } }, 400);
        try {
          await addUser(deps, id, form.value, by);
          return seeOther(`${accountPath(id)}?done=user`);
        } catch (error) {
          if (!(error instanceof AppError) || error.errorName === "not_found") throw error;
          return accountPage(
            operator,
            id,
            {},
            { userForm: { values: form.value, errors: {}, message: error.message } },
            error.status,
          );
        }
      }),
      { detail },
    )
    .post(
      "/accounts/:account_id/users/:user_id/password",
      page(async ({ params, body }, operator, by) => {
        const accountId = params.account_id ?? "";
        const userId = params.user_id ?? "";
        // Another account's user answers as an unknown one, before the form is read.
        await getUser(deps, userId, accountId);
        const form = readForm(resetPasswordForm, body);
        if (!form.ok)
          return accountPage(
            operator,
            accountId,
            {},
            { passwordForm: { values: {}, errors: form.errors, userId } },
            400,
          );
        await resetUserPassword(deps, userId, form.value, by, accountId);
        return seeOther(`${accountPath(accountId)}?done=password&user=${encodeURIComponent(userId)}`);
      }),
      { detail },
    )
    .post(
      "/accounts/:account_id/users/:user_id/delete",
      page(async ({ params }, _operator, by) => {
        const accountId = params.account_id ?? "";
        await deleteUser(deps, params.user_id ?? "", by, accountId);
        return seeOther(`${accountPath(accountId)}?done=removed`);
      }),
      { detail },
    )
    .post(
      "/accounts/:account_id/api-keys/:id/revoke",
      page(async ({ params }, _operator, by) => {
        const accountId = params.account_id ?? "";
        const key = await revokeKey(deps, accountId, params.id ?? "", by);
        return seeOther(`${accountPath(accountId)}?revoked=${encodeURIComponent(key.id)}`);
      }),
      { detail },
    )
    .post(
      "/accounts/:account_id/numbers/:phone_number_id/check",
      page(async ({ params, body }, _operator, by) => {
        const accountId = params.account_id ?? "";
        const form = readForm(checkForm, body);
        const number = await checkNumber(deps, accountId, params.phone_number_id ?? "", by);
        const checked = `checked=${encodeURIComponent(number.phoneNumberId)}`;
        return seeOther(
          form.ok && form.value.back === "numbers"
            ? `/operator/numbers?${checked}`
            : `${accountPath(accountId)}?${checked}`,
        );
      }),
      { detail },
    )
    .get(
      "/numbers",
      page(async ({ query }, operator) => {
        const filter: NumberFilter = {
          state: (query.state || undefined) as NumberFilter["state"],
          cause: query.cause || undefined,
        };
        const { rows, causes } = numbersAcross(deps, filter);
        const checked = query.checked
          ? numbersAcross(deps, {}).rows.find((h) => h.number.phoneNumberId === query.checked)
          : undefined;
        return consolePage(
          operator,
          "Numbers",
          "numbers",
          NumbersPage({ rows, causes, filter, now: deps.clock.now(), flash: checkedFlash(checked) }),
        );
      }),
      { query: numbersQuery, detail },
    )
    .get(
      "/usage",
      page(async ({ query }, operator) => {
        const by = query.by === "month" ? "month" : "day";
        const { period, rows } = await dailyUsage(deps, query);
        const csv = new URLSearchParams({
          from: new Date(period.from).toISOString(),
          to: new Date(period.to).toISOString(),
          ...(query.account_id ? { account_id: query.account_id } : {}),
        });
        return consolePage(
          operator,
          "Usage",
          "usage",
          UsagePage({
            accounts: [...deps.store.directory.accounts()].sort((a, b) => a.name.localeCompare(b.name)),
            query: { account_id: query.account_id, from: query.from, to: query.to, by },
            first: dayText(period.from),
            last: dayText(period.to - 1),
            rows: usageTotals(rows, by),
            csv: `/admin/usage.csv?${csv}`,
          }),
        );
      }),
      { query: usagePageQuery, detail },
    )
    .get(
      "/audit",
      page(async ({ query }, operator) => {
        const filter: AuditPageFilter = {
          account_id: query.account_id || undefined,
          actor: query.actor || undefined,
          action: query.action || undefined,
          from: query.from || undefined,
          to: query.to || undefined,
        };
        let result: Awaited<ReturnType<typeof listAudit>> = { data: [], nextCursor: null };
        let refused: string | undefined;
        try {
          // The page's time fields have no zone: read as UTC, as every time on it is shown.
          result = await listAudit(deps, {
            ...filter,
            from: utcField(filter.from),
            to: utcField(filter.to),
            cursor: query.cursor || undefined,
          });
        } catch (error) {
          // What the form sends is always valid; a hand-made filter that is not is said, over no entries.
          if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
          refused = error.message;
        }
        return consolePage(
          operator,
          "Audit log",
          "audit",
          AuditPage({
            entries: result.data.map(auditView),
            accounts: [...deps.store.directory.accounts()].sort((a, b) => a.name.localeCompare(b.name)),
            kinds: ACTION_KINDS,
            filter,
            refused,
            nextCursor: result.nextCursor,
            firstPage: !query.cursor,
            now: deps.clock.now(),
          }),
        );
      }),
      { query: auditPageQuery, detail },
    )
    .get(
      "/backups",
      page(async ({ query }, operator) => {
        const started = typeof query.started === "string" ? query.started : null;
        const flash = started ? (
          <Notice tone="ok">
            <p>
              A backup is being taken: <code safe>{started}</code>. It shows below once it is verified and stored.
            </p>
          </Notice>
        ) : undefined;
        const state = await backupState(backups, deps.config.backup.schedule);
        return consolePage(operator, "Backups", "backups", BackupsPage({ state, now: deps.clock.now(), flash }));
      }),
      { detail },
    )
    .post(
      "/backups",
      page(async (_ctx, operator, by) => {
        if (backups === null) throw new AppError("backup_unsupported");
        try {
          const { name, done } = await backups.start();
          // A failure is logged, counted, and shown on this page (Last failure) by Backups.
          recordedBackup(deps, done, by).catch(() => undefined);
          return seeOther(`/operator/backups?started=${encodeURIComponent(name)}`);
        } catch (error) {
          if (!(error instanceof AppError) || error.errorName !== "backup_running") throw error;
          const flash = (
            <Notice tone="warn">
              <p safe>{error.message}</p>
            </Notice>
          );
          const state = await backupState(backups, deps.config.backup.schedule);
          const body = BackupsPage({ state, now: deps.clock.now(), flash });
          return htmlResponse(consolePage(operator, "Backups", "backups", body), 409);
        }
      }),
      { detail },
    )
    .get(
      "/*",
      page(async (_ctx, operator) => htmlResponse(consolePage(operator, "Not found", null, NotFound()), 404)),
      { detail },
    );
}
