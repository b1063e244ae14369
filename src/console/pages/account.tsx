import { escapeHtml } from "@kitajs/html";
import { UsageChart } from "../../html/chart.tsx";
import { Badge, Time } from "../../html/components.tsx";
import { KeysTable } from "../../html/keys-table.tsx";
import { disabledText, EndpointState } from "../../html/endpoint-state.tsx";
import type { NumberUsage } from "../../html/usage.ts";
import { causeOf, causeText, KIND_NAMES, NUMBER_STATES } from "../../numbers/condition.ts";
import type { User, Waba } from "../../store/types.ts";
import { addUserForm, resetPasswordForm } from "../forms.ts";
import { endpointView } from "../../webhooks/views.ts";
import type { AccountDetail, EndpointHealth } from "../reports.ts";
import { BILLING_CHOICES } from "./accounts.tsx";
import { Choice, ErrorSummary, type FieldSpec, Fields, type FormState, SubmitBeside } from "./fields.tsx";
import { checkAgain, HEALTH, lastChecked, NUMBER } from "./number-columns.tsx";
import { countColumn, Table } from "./table.tsx";
import { accountPath, BillingBadge, count, numberName, share } from "./words.tsx";

/** A refused new password: the form state, and whose it was. */
export type PasswordForm = FormState & { userId: string };

export interface AccountPageProps {
  detail: AccountDetail;
  flash?: JSX.Element;
  userForm?: FormState;
  passwordForm?: PasswordForm;
}

const WABA_STATE: Record<Waba["status"], keyof typeof NUMBER_STATES> = {
  connected: "connected",
  disconnected: "waba_disconnected",
  token_revoked: "token_revoked",
};

function Facts(props: { detail: AccountDetail }) {
  const { account: a, now } = props.detail;
  return (
    <section class="panel" aria-labelledby="facts-heading">
      <h2 id="facts-heading">Account</h2>
      <dl class="facts">
        <dt>Id</dt>
        <dd class="mono" safe>
          {a.id}
        </dd>
        <dt>Contact email</dt>
        <dd safe>{a.email}</dd>
        <dt>Billing</dt>
        <dd>
          <BillingBadge status={a.billingStatus} />
        </dd>
        <dt>Delivery history kept</dt>
        <dd>{a.retention === "7d" ? "7 days" : "24 hours"}</dd>
        <dt>Numbers allowed</dt>
        <dd>{a.maxNumbers === null ? "No cap" : escapeHtml(count(a.maxNumbers))}</dd>
        <dt>Created</dt>
        <dd>
          <Time at={a.createdAt} now={now} />
        </dd>
      </dl>
      <form method="post" action={`${accountPath(a.id)}/billing`} class="row actions narrow">
        <Choice
          id="billing-status"
          name="billing_status"
          label="Billing status"
          options={BILLING_CHOICES}
          value={a.billingStatus}
        />
        <SubmitBeside text="Set billing status" />
      </form>
      <p class="small muted">
        Overdue and suspended accounts' proxied calls are refused with 402; "No subscription" too.
      </p>
    </section>
  );
}

/** The add-user form's fields, read against the operator API's own rules. */
const USER_FIELDS = [
  { id: "new-user-email", name: "email", label: "Email", rule: addUserForm.properties.email },
  {
    id: "new-user-password",
    name: "password",
    label: "Password",
    hint: "At least 10 characters.",
    type: "password",
    rule: addUserForm.properties.password,
  },
] as const satisfies readonly FieldSpec[];

/** A user's new-password field; its id names the user, as each row has one. */
const passwordField = (user: User): FieldSpec => ({
  id: `password-${user.id}`,
  name: "password",
  label: `New password for ${user.email}`,
  hint: "At least 10 characters. Every session of theirs ends.",
  type: "password",
  rule: resetPasswordForm.properties.password,
});

function UserActions(props: { user: User; accountId: string; form?: PasswordForm }) {
  const { user } = props;
  const base = `${accountPath(props.accountId)}/users/${encodeURIComponent(user.id)}`;
  const mine = props.form?.userId === user.id ? props.form : undefined;
  return (
    <div class="row actions">
      <details open={mine ? true : undefined}>
        <summary>New password</summary>
        <form method="post" action={`${base}/password`} class="stack">
          <Fields fields={[passwordField(user)]} form={mine} />
          <div>
            <button type="submit" class="secondary">
              Set the new password
            </button>
          </div>
        </form>
      </details>
      <form method="post" action={`${base}/delete`} data-confirm={`Remove ${user.email}? They can no longer sign in.`}>
        <button type="submit" class="danger" aria-label={`Remove ${user.email}`}>
          Remove
        </button>
      </form>
    </div>
  );
}

function Users(props: { detail: AccountDetail; form?: FormState; passwordForm?: PasswordForm }) {
  const { users, account, now } = props.detail;
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Dashboard users</h2>
      <Table
        rows={users}
        columns={[
          { head: "Email", class: "break", cell: (u) => escapeHtml(u.email) },
          { head: "Created", cell: (u) => <Time at={u.createdAt} now={now} /> },
          {
            head: "Last sign-in",
            cell: (u) =>
              u.lastSignInAt === null ? <span class="muted">Never</span> : <Time at={u.lastSignInAt} now={now} />,
          },
          {
            head: "Actions",
            hidden: true,
            cell: (u) => <UserActions user={u} accountId={account.id} form={props.passwordForm} />,
          },
        ]}
        empty="No dashboard user yet: add one below, and give them the email and password."
        labelledBy="users-heading"
      />
      <details class="panel" open={props.form ? true : undefined}>
        <summary>Add a user</summary>
        <form method="post" action={`${accountPath(account.id)}/users`} class="stack">
          <Fields fields={USER_FIELDS} form={props.form} />
          <div>
            <button type="submit">Add user</button>
          </div>
        </form>
      </details>
    </section>
  );
}

function WabaState(props: { waba: Waba }) {
  const w = props.waba;
  const cause = causeOf(w, "waba");
  return (
    <>
      <Badge tone={w.status === "connected" ? "ok" : "bad"} text={NUMBER_STATES[WABA_STATE[w.status]]} />
      {cause && w.status !== "connected" ? (
        <p class="small muted" safe>
          {causeText(cause)}
        </p>
      ) : (
        ""
      )}
    </>
  );
}

function Wabas(props: { detail: AccountDetail }) {
  const { wabas, numbers } = props.detail;
  return (
    <Table
      rows={wabas}
      columns={[
        { head: "WABA", class: "mono", cell: (w) => escapeHtml(w.wabaId) },
        { head: "App", cell: (w) => (w.appSecret === null ? "The service's app" : "Their own app") },
        { head: "State", cell: (w) => <WabaState waba={w} /> },
        countColumn<Waba>("Numbers", (w) => numbers.filter((n) => n.number.wabaId === w.wabaId).length),
      ]}
      empty="No WABA yet: one comes with the first number the account's users connect on their dashboard's Numbers page, or with switchboard admin wabas create."
      labelledBy="wabas-heading"
    />
  );
}

function NumberCalls(props: { usage: NumberUsage | undefined; label: string }) {
  if (!props.usage) return <span class="muted small">No calls in the last 7 days</span>;
  return (
    <>
      <div class="small muted">Last 24 hours</div>
      <UsageChart bars={props.usage.hours} unit="hour" label={`${props.label}, last 24 hours`} />
      <div class="small muted">Last 7 days</div>
      <UsageChart bars={props.usage.days} unit="day" label={`${props.label}, last 7 days`} />
    </>
  );
}

function Numbers(props: { detail: AccountDetail }) {
  const { numbers, usage, now } = props.detail;
  return (
    <Table
      rows={numbers}
      columns={[
        NUMBER,
        HEALTH,
        {
          head: "Kind and level",
          label: "Kind",
          cell: (h) => (
            <>
              {escapeHtml(KIND_NAMES[h.number.kind])}
              <div class="small">{escapeHtml(h.number.throughputLevel)}</div>
            </>
          ),
        },
        lastChecked(now),
        {
          head: "Calls",
          class: "usage",
          cell: (h) => <NumberCalls usage={usage.get(h.number.phoneNumberId)} label={numberName(h.number)} />,
        },
        checkAgain("account"),
      ]}
      empty="No number yet: the account's users connect one on their dashboard's Numbers page (bring your own, or Embedded Signup), or run switchboard admin numbers create."
      labelledBy="numbers-heading"
    />
  );
}

function SuccessRate(props: { e: EndpointHealth }) {
  const { e } = props;
  if (e.successRate === null) return <span class="muted small">No attempts</span>;
  return (
    <>
      <strong>{escapeHtml(share(e.successRate))}</strong>{" "}
      <span class="small muted">
        {escapeHtml(`of ${count(e.succeeded + e.failed)} attempt${e.succeeded + e.failed === 1 ? "" : "s"}`)}
      </span>
    </>
  );
}

function EndpointUrl(props: { endpoint: EndpointHealth["endpoint"] }) {
  const e = props.endpoint;
  const numbers = e.phoneNumberId === null ? "All numbers" : `Number ${e.phoneNumberId}`;
  const scheme =
    e.signature === "platform" ? " · platform signature (X-Hub-Signature-256, one change per delivery)" : "";
  return (
    <>
      <span safe>{e.url}</span>
      <div class="small muted" safe>
        {numbers + scheme}
      </div>
    </>
  );
}

function EndpointStateText(props: { endpoint: EndpointHealth["endpoint"] }) {
  const e = props.endpoint;
  return (
    <>
      <EndpointState endpoint={endpointView(e)} />
      {e.enabled ? (
        ""
      ) : (
        <p class="small" safe>
          {disabledText(e.disabledReason)}
        </p>
      )}
    </>
  );
}

function Endpoints(props: { detail: AccountDetail }) {
  const { endpoints } = props.detail;
  return (
    <Table
      rows={endpoints}
      columns={[
        { head: "URL", class: "break", cell: (e) => <EndpointUrl endpoint={e.endpoint} /> },
        { head: "State", cell: (e) => <EndpointStateText endpoint={e.endpoint} /> },
        countColumn<EndpointHealth>("Failures in a row", (e) => e.endpoint.consecutiveFailures, "Failures"),
        { head: "Succeeded, 24 hours", label: "24 hours", cell: (e) => <SuccessRate e={e} /> },
      ]}
      empty="No webhook endpoint yet: the account's users add theirs on their dashboard's Endpoints page."
      labelledBy="endpoints-heading"
    />
  );
}

export function AccountPage(props: AccountPageProps) {
  const { detail, flash = "" } = props;
  const { account } = detail;
  return (
    <>
      <p class="small">
        <a href="/operator/accounts">Accounts</a>
      </p>
      <h1 safe>{account.name}</h1>
      {flash}
      <ErrorSummary form={props.userForm} fields={USER_FIELDS} what="The new user" />
      {props.passwordForm ? (
        <ErrorSummary
          form={props.passwordForm}
          fields={detail.users.filter((u) => u.id === props.passwordForm?.userId).map(passwordField)}
          what="The new password"
        />
      ) : (
        ""
      )}
      <Facts detail={detail} />
      <Users detail={detail} form={props.userForm} passwordForm={props.passwordForm} />
      <h2 id="keys-heading">API keys</h2>
      <KeysTable
        keys={detail.keys}
        now={detail.now}
        revokeAction={(k) => `${accountPath(account.id)}/api-keys/${encodeURIComponent(k.id)}/revoke`}
        empty="No API keys yet: the account's users create theirs on their dashboard's API keys page, or run switchboard admin api-keys create."
      />
      <h2 id="wabas-heading">WABAs</h2>
      <Wabas detail={detail} />
      <h2 id="numbers-heading">Numbers</h2>
      <Numbers detail={detail} />
      <h2 id="endpoints-heading">Webhook endpoints</h2>
      <Endpoints detail={detail} />
      <p class="small">
        <a href={`/operator/usage?account_id=${encodeURIComponent(account.id)}`}>Usage of this account</a>
      </p>
    </>
  );
}
