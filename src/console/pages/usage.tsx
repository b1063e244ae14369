import { escapeHtml } from "@kitajs/html";
import type { Account } from "../../store/types.ts";
import type { UsageTotal } from "../../requests/usage-report.ts";
import { Choice } from "./fields.tsx";
import { accountPath, count } from "./words.tsx";

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
        <Choice
          id="usage-account"
          name="account_id"
          label="Account"
          options={[
            { value: "", text: "Every account" },
            ...props.accounts.map((a) => ({ value: a.id, text: a.name })),
          ]}
          value={q.account_id ?? ""}
        />
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
        <div class="filter-submit">
          <button type="submit" class="secondary">
            Show
          </button>
        </div>
      </form>
      <p>
        <a class="button" href={props.csv} download="">
          Download CSV
        </a>{" "}
        <span class="small muted">{escapeHtml(`${props.first} to ${props.last}`)}</span>
      </p>
      {props.rows.length === 0 ? (
        <p class="panel">No proxied calls in this period.</p>
      ) : (
        <div class="table-wrap">
          <table class="cards">
            <caption class="visually-hidden">Usage</caption>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Number</th>
                <th scope="col">{q.by === "month" ? "Month" : "Day"}</th>
                <th scope="col" class="num">
                  Forwarded
                </th>
                <th scope="col" class="num">
                  Upstream errors
                </th>
                <th scope="col" class="num">
                  Refused
                </th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((r) => (
                <tr>
                  <td data-label="Account">
                    <a href={accountPath(r.accountId)} safe>
                      {name(r.accountId)}
                    </a>
                  </td>
                  <td data-label="Number" class="mono" safe>
                    {r.targetId}
                  </td>
                  <td data-label={q.by === "month" ? "Month" : "Day"}>{escapeHtml(r.period)}</td>
                  <td data-label="Forwarded" class="num">
                    {escapeHtml(count(r.forwarded))}
                  </td>
                  <td data-label="Errors" class="num">
                    {escapeHtml(count(r.upstreamErrors))}
                  </td>
                  <td data-label="Refused" class="num">
                    {escapeHtml(count(r.refused))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
