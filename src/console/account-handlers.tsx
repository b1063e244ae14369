import { deleteUser, getUser, resetUserPassword } from "../accounts/logins.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";
import { Notice } from "../html/components.tsx";
import { readForm } from "../html/form.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import type { PageContext } from "../html/page-context.ts";
import type { Operator } from "../store/operators.ts";
import { addUser, checkNumber, createAccountWithLogin, revokeKey, setBillingStatus } from "./actions.ts";
import { addUserForm, billingForm, checkForm, createAccountForm, resetPasswordForm } from "./forms.ts";
import type { ConsoleHandler } from "./guard.ts";
import { consolePage } from "./layout.tsx";
import { AccountPage, type AccountPageProps } from "./pages/account.tsx";
import { AccountsPage } from "./pages/accounts.tsx";
import { accountPath, numberName } from "./pages/words.tsx";
import { accountDetail, accountRows, type AccountDetail, type NumberHealth } from "./reports.ts";

/** What a check found, in words. */
export function checkedFlash(h: NumberHealth | undefined): JSX.Element | undefined {
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

async function accountsPage(
  deps: Deps,
  operator: Operator,
  search: string,
  extra: Partial<Parameters<typeof AccountsPage>[0]> = {},
  status = 200,
) {
  return htmlResponse(
    consolePage(
      operator,
      "Accounts",
      "accounts",
      AccountsPage({ rows: await accountRows(deps, search), search, ...extra }),
    ),
    status,
  );
}

/** What the account page says after a change (`?done=`, `?revoked=`, `?checked=`); the last that applies wins. */
function accountFlash(d: AccountDetail, query: PageContext["query"]): JSX.Element | undefined {
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
  return flash;
}

async function accountPage(
  deps: Deps,
  operator: Operator,
  id: string,
  query: PageContext["query"],
  extra: Partial<AccountPageProps> = {},
  status = 200,
) {
  const d = await accountDetail(deps, id);
  return htmlResponse(
    consolePage(
      operator,
      d.account.name,
      "accounts",
      AccountPage({ detail: d, flash: accountFlash(d, query), ...extra }),
    ),
    status,
  );
}

export const listAccounts =
  (deps: Deps): ConsoleHandler =>
  async ({ query }, operator) =>
    accountsPage(deps, operator, query.q ?? "");

export const createAccount =
  (deps: Deps): ConsoleHandler =>
  async ({ body }, operator, by) => {
    const form = readForm(createAccountForm, body);
    if (!form.ok) return accountsPage(deps, operator, "", { form: { values: form.raw, errors: form.errors } }, 400);
    try {
      const { account } = await createAccountWithLogin(deps, form.value, by);
      return seeOther(`${accountPath(account.id)}?done=created`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return accountsPage(
        deps,
        operator,
        "",
        { form: { values: form.value, errors: {}, message: error.message } },
        error.status,
      );
    }
  };

export const showAccount =
  (deps: Deps): ConsoleHandler =>
  async ({ params, query }, operator) =>
    accountPage(deps, operator, params.account_id ?? "", query);

export const setBilling =
  (deps: Deps): ConsoleHandler =>
  async ({ params, body }, _operator, by) => {
    const id = params.account_id ?? "";
    const form = readForm(billingForm, body);
    if (!form.ok) throw new AppError("invalid_request", "Choose a billing status.");
    await setBillingStatus(deps, id, form.value.billing_status, by);
    return seeOther(`${accountPath(id)}?done=billing`);
  };

export const addAccountUser =
  (deps: Deps): ConsoleHandler =>
  async ({ params, body }, operator, by) => {
    const id = params.account_id ?? "";
    const form = readForm(addUserForm, body);
    if (!form.ok)
      return accountPage(deps, operator, id, {}, { userForm: { values: form.raw, errors: form.errors } }, 400);
    try {
      await addUser(deps, id, form.value, by);
      return seeOther(`${accountPath(id)}?done=user`);
    } catch (error) {
      if (!(error instanceof AppError) || error.errorName === "not_found") throw error;
      return accountPage(
        deps,
        operator,
        id,
        {},
        { userForm: { values: form.value, errors: {}, message: error.message } },
        error.status,
      );
    }
  };

export const resetPassword =
  (deps: Deps): ConsoleHandler =>
  async ({ params, body }, operator, by) => {
    const accountId = params.account_id ?? "";
    const userId = params.user_id ?? "";
    // Another account's user answers as an unknown one, before the form is read.
    await getUser(deps, userId, accountId);
    const form = readForm(resetPasswordForm, body);
    if (!form.ok)
      return accountPage(
        deps,
        operator,
        accountId,
        {},
        { passwordForm: { values: {}, errors: form.errors, userId } },
        400,
      );
    await resetUserPassword(deps, userId, form.value, by, accountId);
    return seeOther(`${accountPath(accountId)}?done=password&user=${encodeURIComponent(userId)}`);
  };

export const removeUser =
  (deps: Deps): ConsoleHandler =>
  async ({ params }, _operator, by) => {
    const accountId = params.account_id ?? "";
    await deleteUser(deps, params.user_id ?? "", by, accountId);
    return seeOther(`${accountPath(accountId)}?done=removed`);
  };

export const revokeAccountKey =
  (deps: Deps): ConsoleHandler =>
  async ({ params }, _operator, by) => {
    const accountId = params.account_id ?? "";
    const key = await revokeKey(deps, accountId, params.id ?? "", by);
    return seeOther(`${accountPath(accountId)}?revoked=${encodeURIComponent(key.id)}`);
  };

export const checkAccountNumber =
  (deps: Deps): ConsoleHandler =>
  async ({ params, body }, _operator, by) => {
    const accountId = params.account_id ?? "";
    const form = readForm(checkForm, body);
    const number = await checkNumber(deps, accountId, params.phone_number_id ?? "", by);
    const checked = `checked=${encodeURIComponent(number.phoneNumberId)}`;
    return seeOther(
      form.ok && form.value.back === "numbers"
        ? `/operator/numbers?${checked}`
        : `${accountPath(accountId)}?${checked}`,
    );
  };
