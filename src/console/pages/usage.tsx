import { escapeHtml } from "@kitajs/html";
import type { Account } from "../../store/types.ts";
import type { UsageTotal } from "../../requests/usage-report.ts";
import { AccountChoice, Choice, SubmitBeside } from "./fields.tsx";
import { accountColumn, countColumn, Table } from "./table.tsx";

export interface UsagePageProps {
  accounts: Account[];
  /** The query as given, for the form and the CSV link. */
  query: { account_id?: string; from?: string; to?: string; by: "day" | "month" };
  /** The first and last day covered, as dates. */
  first: string;
  last: string;
  rows: UsageTotal[];
  csv: string;
}

export function UsagePage(props: UsagePageProps) {
  const q = props.query;
  const name = (id: string) => props.accounts.find((a) => a.id === id)?.name ?? id;
  return (
    <>
      <h1>Usage</h1>
      <p class="lead">
        Proxied calls per account and number, by UTC day or month: what an operator bills from. The CSV has one row per
        account, number, day, kind (forwarded, upstream error, refused) and label (the route or error code). Days are
        UTC; the Until day is not included.
      </p>
      <form method="get" action="/operator/usage" class="row filters">
        <AccountChoice id="usage-account" accounts={props.accounts} value={q.account_id} />
        <div>
          <label for="usage-from">From</label>
          <input type="date" id="usage-from" name="from" value={props.first} />
        </div>
        <div>
          <label for="usage-to">Until</label>
          <input type="date" id="usage-to" name="to" value={q.to?.slice(0, 10)} />
        </div>
        <Choice
          id="usage-by"
          name="by"
          label="Per"
          options={[
            { value: "day", text: "Day" },
            { value: "month", text: "Month" },
          ]}
          value={q.by}
        />
        <SubmitBeside text="Show" />
      </form>
      <p>
        <a class="button" href={props.csv} download="">
          Download CSV
        </a>{" "}
        <span class="small muted">{escapeHtml(`${props.first} to ${props.last}`)}</span>
      </p>
      <Table<UsageTotal>
        rows={props.rows}
        columns={[
          accountColumn((r) => ({ id: r.accountId, name: name(r.accountId) })),
          { head: "Number", class: "mono", cell: (r) => escapeHtml(r.targetId) },
          { head: q.by === "month" ? "Month" : "Day", cell: (r) => escapeHtml(r.period) },
          countColumn("Forwarded", (r) => r.forwarded),
          countColumn("Upstream errors", (r) => r.upstreamErrors, "Errors"),
          countColumn("Refused", (r) => r.refused),
        ]}
        empty="No proxied calls in this period: choose an earlier one, or another account."
        caption="Usage"
      />
    </>
  );
}
