import { escapeHtml } from "@kitajs/html";
import { UsageChart } from "../../dashboard/chart.tsx";
import { Badge, Notice, Time } from "../../dashboard/components.tsx";
import { KeysTable } from "../../dashboard/pages/api-keys.tsx";
import { disabledText, EndpointState } from "../../dashboard/pages/endpoints.tsx";
import type { NumberUsage } from "../../dashboard/usage.ts";
import { causeOf, causeText, KIND_NAMES, NUMBER_STATES } from "../../numbers/condition.ts";
import type { Waba } from "../../store/types.ts";
import { endpointView } from "../../webhooks/views.ts";
import type { AccountDetail, EndpointHealth, NumberHealth } from "../reports.ts";
import { BILLING_CHOICES } from "./accounts.tsx";
import { Choice, Field, type FormState } from "./fields.tsx";
import { accountPath, BillingBadge, count, Health, NumberName, numberName, share } from "./words.tsx";

export interface AccountPageProps {
  detail: AccountDetail;
  flash?: JSX.Element;
  userForm?: FormState;
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
        <div class="filter-submit">
          <button type="submit" class="secondary">
            Set billing status
          </button>
        </div>
      </form>
      <p class="small muted">
        Overdue and suspended accounts' proxied calls are refused with 402; "No subscription" too.
      </p>
    </section>
  );
}

function Users(props: { detail: AccountDetail; form?: FormState }) {
  const { users, account, now } = props.detail;
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Dashboard users</h2>
      {users.length === 0 ? (
        <p class="panel">No dashboard user yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="cards" aria-labelledby="users-heading">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr>
                  <td data-label="Email" class="break" safe>
                    {u.email}
                  </td>
                  <td data-label="Created">
                    <Time at={u.createdAt} now={now} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details class="panel" open={props.form ? true : undefined}>
        <summary>Add a user</summary>
        {props.form?.message ? (
          <Notice tone="bad">
            <p safe>{props.form.message}</p>
          </Notice>
        ) : (
          ""
        )}
        <form method="post" action={`${accountPath(account.id)}/users`} class="stack">
          <Field id="new-user-email" name="email" label="Email" type="email" maxlength={320} form={props.form} />
          <Field
            id="new-user-password"
            name="password"
            label="Password"
            hint="At least 10 characters."
            type="password"
            maxlength={200}
            form={props.form}
          />
          <div>
            <button type="submit">Add user</button>
          </div>
        </form>
      </details>
    </section>
  );
}

function Wabas(props: { detail: AccountDetail }) {
  const { wabas, numbers } = props.detail;
  if (wabas.length === 0) return <p class="panel">No WABA connected.</p>;
  return (
    <div class="table-wrap">
      <table class="cards" aria-labelledby="wabas-heading">
        <thead>
          <tr>
            <th scope="col">WABA</th>
            <th scope="col">App</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Numbers
            </th>
          </tr>
        </thead>
        <tbody>
          {wabas.map((w) => {
            const cause = causeOf(w, "waba");
            return (
              <tr>
                <td data-label="WABA" class="mono" safe>
                  {w.wabaId}
                </td>
                <td data-label="App">{w.appSecret === null ? "The service's app" : "Their own app"}</td>
                <td data-label="State">
                  <Badge tone={w.status === "connected" ? "ok" : "bad"} text={NUMBER_STATES[WABA_STATE[w.status]]} />
                  {cause && w.status !== "connected" ? (
                    <p class="small muted" safe>
                      {causeText(cause)}
                    </p>
                  ) : (
                    ""
                  )}
                </td>
                <td data-label="Numbers" class="num">
                  {escapeHtml(count(numbers.filter((n) => n.number.wabaId === w.wabaId).length))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Check again (or Re-sync, for a usable number): the operator API's sync, which also checks its condition. */
export function CheckAgain(props: { health: NumberHealth; back: "account" | "numbers" }) {
  const { number, condition, account } = props.health;
  const label = condition.usable ? "Re-sync" : "Check again";
  return (
    <form method="post" action={`${accountPath(account.id)}/numbers/${encodeURIComponent(number.phoneNumberId)}/check`}>
      <input type="hidden" name="back" value={props.back} />
      <button type="submit" class="secondary" aria-label={`${label} ${numberName(number)}`}>
        {escapeHtml(label)}
      </button>
    </form>
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
  if (numbers.length === 0) return <p class="panel">No number connected.</p>;
  return (
    <div class="table-wrap">
      <table class="cards" aria-labelledby="numbers-heading">
        <thead>
          <tr>
            <th scope="col">Number</th>
            <th scope="col">Health</th>
            <th scope="col">Kind and level</th>
            <th scope="col">Last checked</th>
            <th scope="col">Calls</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {numbers.map((h) => (
            <tr>
              <td data-label="Number">
                <NumberName number={h.number} />
              </td>
              <td data-label="Health">
                <Health health={h} />
              </td>
              <td data-label="Kind">
                {escapeHtml(KIND_NAMES[h.number.kind])}
                <div class="small">{escapeHtml(h.number.throughputLevel)}</div>
              </td>
              <td data-label="Last checked">
                <Time at={h.number.syncedAt} now={now} />
              </td>
              <td data-label="Calls" class="usage">
                <NumberCalls usage={usage.get(h.number.phoneNumberId)} label={numberName(h.number)} />
              </td>
              <td data-label="Actions">
                <CheckAgain health={h} back="account" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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

function Endpoints(props: { detail: AccountDetail }) {
  const { endpoints } = props.detail;
  if (endpoints.length === 0) return <p class="panel">No webhook endpoint.</p>;
  return (
    <div class="table-wrap">
      <table class="cards" aria-labelledby="endpoints-heading">
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Failures in a row
            </th>
            <th scope="col">Succeeded, 24 hours</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((e) => (
            <tr>
              <td data-label="URL" class="break">
                <span safe>{e.endpoint.url}</span>
                <div class="small muted" safe>
                  {e.endpoint.phoneNumberId === null ? "All numbers" : `Number ${e.endpoint.phoneNumberId}`}
                </div>
              </td>
              <td data-label="State">
                <EndpointState endpoint={endpointView(e.endpoint)} />
                {e.endpoint.enabled ? (
                  ""
                ) : (
                  <p class="small" safe>
                    {disabledText(e.endpoint.disabledReason)}
                  </p>
                )}
              </td>
              <td data-label="Failures" class="num">
                {escapeHtml(count(e.endpoint.consecutiveFailures))}
              </td>
              <td data-label="24 hours">
                <SuccessRate e={e} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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
      <Facts detail={detail} />
      <Users detail={detail} form={props.userForm} />
      <h2 id="keys-heading">API keys</h2>
      <KeysTable
        keys={detail.keys}
        now={detail.now}
        revokeAction={(k) => `${accountPath(account.id)}/api-keys/${encodeURIComponent(k.id)}/revoke`}
        empty="No API keys."
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
