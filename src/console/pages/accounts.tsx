import { escapeHtml } from "@kitajs/html";
import { Notice } from "../../dashboard/components.tsx";
import type { AccountRow } from "../reports.ts";
import { Choice, Field, type FormState } from "./fields.tsx";
import { accountPath, BILLING, BillingBadge, count } from "./words.tsx";

export const BILLING_CHOICES = Object.entries(BILLING).map(([value, b]) => ({ value, text: b.text }));

function AccountsTable(props: { rows: AccountRow[]; search: string }) {
  if (props.rows.length === 0)
    return <p class="panel">{props.search ? "No account matches." : "No accounts yet. Create one below."}</p>;
  return (
    <div class="table-wrap">
      <table class="cards">
        <caption class="visually-hidden">Accounts</caption>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Billing</th>
            <th scope="col" class="num">
              Numbers
            </th>
            <th scope="col" class="num">
              Active keys
            </th>
            <th scope="col" class="num">
              Calls this month
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr>
              <td data-label="Account" class="break">
                <a href={accountPath(r.account.id)}>
                  <strong safe>{r.account.name}</strong>
                </a>
                <div class="small" safe>
                  {r.account.email}
                </div>
                <div class="small muted mono" safe>
                  {r.account.id}
                </div>
              </td>
              <td data-label="Billing">
                <BillingBadge status={r.account.billingStatus} />
              </td>
              <td data-label="Numbers" class="num">
                {escapeHtml(count(r.numbers))}
                {r.unusableNumbers > 0 ? (
                  <div class="small error-text">{escapeHtml(count(r.unusableNumbers))} not connected</div>
                ) : (
                  ""
                )}
              </td>
              <td data-label="Active keys" class="num">
                {escapeHtml(count(r.activeKeys))}
              </td>
              <td data-label="This month" class="num">
                {escapeHtml(count(r.callsThisMonth))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AccountsPage(props: { rows: AccountRow[]; search: string; form?: FormState }) {
  const values = props.form?.values ?? {};
  return (
    <>
      <h1>Accounts</h1>
      <p class="lead">Every customer account: billing state, numbers, keys and this month's proxied calls.</p>
      <search>
        <form method="get" action="/operator/accounts" class="row filters">
          <div>
            <label for="search">Search</label>
            <input
              type="text"
              id="search"
              name="q"
              value={props.search}
              maxlength="200"
              placeholder="Name, email or id"
            />
          </div>
          <div class="filter-submit">
            <button type="submit" class="secondary">
              Search
            </button>
          </div>
        </form>
      </search>
      <AccountsTable rows={props.rows} search={props.search} />

      <section class="panel" aria-labelledby="create-heading">
        <h2 id="create-heading">Create an account</h2>
        <p class="small">The account, and its first dashboard login: give the person the email and password.</p>
        {props.form?.message ? (
          <Notice tone="bad">
            <p safe>{props.form.message}</p>
          </Notice>
        ) : (
          ""
        )}
        <form method="post" action="/operator/accounts" class="stack">
          <Field id="account-name" name="name" label="Name" maxlength={200} form={props.form} />
          <Field
            id="account-email"
            name="email"
            label="Contact email"
            hint="Where warnings and disable notices go."
            type="email"
            maxlength={320}
            form={props.form}
          />
          <Choice
            id="account-billing"
            name="billing_status"
            label="Billing status"
            options={BILLING_CHOICES}
            value={typeof values.billing_status === "string" ? values.billing_status : "active"}
            error={props.form?.errors.billing_status}
          />
          <Choice
            id="account-retention"
            name="retention"
            label="Delivery history kept"
            options={[
              { value: "24h", text: "24 hours" },
              { value: "7d", text: "7 days" },
            ]}
            value={typeof values.retention === "string" ? values.retention : "24h"}
            error={props.form?.errors.retention}
          />
          <Field
            id="user-email"
            name="user_email"
            label="First user's email"
            hint="Their dashboard login."
            type="email"
            maxlength={320}
            form={props.form}
          />
          <Field
            id="user-password"
            name="user_password"
            label="First user's password"
            hint="At least 10 characters."
            type="password"
            maxlength={200}
            form={props.form}
          />
          <div>
            <button type="submit">Create account</button>
          </div>
        </form>
      </section>
    </>
  );
}
