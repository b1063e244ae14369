import { escapeHtml } from "@kitajs/html";
import { Time } from "../../dashboard/components.tsx";
import { KIND_NAMES, NUMBER_STATES } from "../../numbers/condition.ts";
import type { NumberFilter, NumberHealth } from "../reports.ts";
import { CheckAgain } from "./account.tsx";
import { Choice } from "./fields.tsx";
import { accountPath, count, Health, NumberName } from "./words.tsx";

export const STATE_CHOICES = [
  { value: "", text: "Any state" },
  { value: "unusable", text: "Not connected (any cause)" },
  ...Object.entries(NUMBER_STATES).map(([value, text]) => ({ value, text })),
];

export function NumbersPage(props: {
  rows: NumberHealth[];
  causes: number[];
  filter: NumberFilter;
  now: number;
  flash?: JSX.Element;
}) {
  const { flash = "" } = props;
  const causeChoices = [
    { value: "", text: "Any cause" },
    { value: "none", text: "No upstream error (set by hand, or connected)" },
    ...props.causes.map((code) => ({ value: String(code), text: `Upstream error ${code}` })),
  ];
  return (
    <>
      <h1>Numbers</h1>
      <p class="lead">Every account's numbers with their health, in the words their owners see on the dashboard.</p>
      {flash}
      <form method="get" action="/operator/numbers" class="row filters">
        <Choice id="state" name="state" label="State" options={STATE_CHOICES} value={props.filter.state ?? ""} />
        <Choice id="cause" name="cause" label="Cause" options={causeChoices} value={props.filter.cause ?? ""} />
        <div class="filter-submit">
          <button type="submit" class="secondary">
            Filter
          </button>
        </div>
      </form>
      <p class="small muted">{escapeHtml(`${count(props.rows.length)} number${props.rows.length === 1 ? "" : "s"}`)}</p>
      {props.rows.length === 0 ? (
        <p class="panel">No number matches.</p>
      ) : (
        <div class="table-wrap">
          <table class="cards">
            <caption class="visually-hidden">Numbers</caption>
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Account</th>
                <th scope="col">Health</th>
                <th scope="col">Kind</th>
                <th scope="col">Last checked</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((h) => (
                <tr>
                  <td data-label="Number">
                    <NumberName number={h.number} />
                  </td>
                  <td data-label="Account">
                    <a href={accountPath(h.account.id)} safe>
                      {h.account.name}
                    </a>
                  </td>
                  <td data-label="Health">
                    <Health health={h} />
                  </td>
                  <td data-label="Kind">{escapeHtml(KIND_NAMES[h.number.kind])}</td>
                  <td data-label="Last checked">
                    <Time at={h.number.syncedAt} now={props.now} />
                  </td>
                  <td data-label="Actions">
                    <CheckAgain health={h} back="numbers" />
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
