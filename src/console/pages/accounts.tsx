import { escapeHtml } from "@kitajs/html";
import { firstBad } from "../../html/form-fields.tsx";
import { createAccountForm } from "../forms.ts";
import type { AccountRow } from "../reports.ts";
import { Choice, ErrorSummary, Field, type FieldSpec, type FormState, SubmitBeside } from "./fields.tsx";
import { type Column, countColumn, Table } from "./table.tsx";
import { accountPath, BILLING, BillingBadge, count } from "./words.tsx";

export const BILLING_CHOICES = Object.entries(BILLING).map(([value, b]) => ({ value, text: b.text }));

function AccountName(props: { account: AccountRow["account"] }) {
  const a = props.account;
  return (
    <>
      <a href={accountPath(a.id)}>
        <strong safe>{a.name}</strong>
      </a>
      <div class="small" safe>
        {a.email}
      </div>
      <div class="small muted mono" safe>
        {a.id}
      </div>
    </>
  );
}

function NumbersCount(props: { row: AccountRow }) {
  const r = props.row;
  return (
    <>
      {escapeHtml(count(r.numbers))}
      {r.unusableNumbers > 0 ? (
        <div class="small error-text">{escapeHtml(count(r.unusableNumbers))} not connected</div>
      ) : (
        ""
      )}
    </>
  );
}

const COLUMNS: Column<AccountRow>[] = [
  { head: "Account", class: "break", cell: (r) => <AccountName account={r.account} /> },
  { head: "Billing", cell: (r) => <BillingBadge status={r.account.billingStatus} /> },
  { head: "Numbers", num: true, cell: (r) => <NumbersCount row={r} /> },
  countColumn("Active keys", (r) => r.activeKeys),
  countColumn("Calls this month", (r) => r.callsThisMonth, "This month"),
];

/** The create form's text fields, read against createAccountForm's rules (src/console/forms.ts). */
const ACCOUNT_FIELDS = [
  { id: "account-name", name: "name", label: "Name", rule: createAccountForm.properties.name },
  {
    id: "account-email",
    name: "email",
    label: "Contact email",
    hint: "Where warnings and disable notices go.",
    rule: createAccountForm.properties.email,
  },
  {
    id: "user-email",
    name: "user_email",
    label: "First user's email",
    hint: "Their dashboard login.",
    rule: createAccountForm.properties.user_email,
  },
  {
    id: "user-password",
    name: "user_password",
    label: "First user's password",
    hint: "At least 10 characters.",
    type: "password",
    rule: createAccountForm.properties.user_password,
  },
] as const satisfies readonly FieldSpec[];

export function AccountsPage(props: { rows: AccountRow[]; search: string; form?: FormState }) {
  const first = firstBad(ACCOUNT_FIELDS, props.form);
  return (
    <>
      <h1>Accounts</h1>
      <ErrorSummary form={props.form} fields={ACCOUNT_FIELDS} what="The new account" />
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
          <SubmitBeside text="Search" />
        </form>
      </search>
      <Table
        rows={props.rows}
        columns={COLUMNS}
        empty={props.search ? "No account matches." : "No accounts yet. Create one below."}
        caption="Accounts"
      />

      <section class="panel" aria-labelledby="create-heading">
        <h2 id="create-heading">Create an account</h2>
        <p class="small">The account, and its first dashboard login: give the person the email and password.</p>
        <form method="post" action="/operator/accounts" class="stack">
          <Field {...ACCOUNT_FIELDS[0]} form={props.form} focus={first === ACCOUNT_FIELDS[0]} />
          <Field {...ACCOUNT_FIELDS[1]} form={props.form} focus={first === ACCOUNT_FIELDS[1]} />
          <Choice
            id="account-billing"
            name="billing_status"
            label="Billing status"
            options={BILLING_CHOICES}
            value="active"
            form={props.form}
          />
          <Choice
            id="account-retention"
            name="retention"
            label="Delivery history kept"
            options={[
              { value: "24h", text: "24 hours" },
              { value: "7d", text: "7 days" },
            ]}
            value="24h"
            form={props.form}
          />
          <Field {...ACCOUNT_FIELDS[2]} form={props.form} focus={first === ACCOUNT_FIELDS[2]} />
          <Field {...ACCOUNT_FIELDS[3]} form={props.form} focus={first === ACCOUNT_FIELDS[3]} />
          <div>
            <button type="submit">Create account</button>
          </div>
        </form>
      </section>
    </>
  );
}
