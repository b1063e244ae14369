import { escapeHtml } from "@kitajs/html";
import { KIND_NAMES, NUMBER_STATES } from "../../numbers/condition.ts";
import type { NumberFilter, NumberHealth } from "../reports.ts";
import { Choice, SubmitBeside } from "./fields.tsx";
import { checkAgain, HEALTH, lastChecked, NUMBER, OWNER } from "./number-columns.tsx";
import { type Column, Table } from "./table.tsx";
import { count } from "./words.tsx";

export const STATE_CHOICES = [
  { value: "", text: "Any state" },
  { value: "unusable", text: "Not connected (any cause)" },
  ...Object.entries(NUMBER_STATES).map(([value, text]) => ({ value, text })),
];

const KIND: Column<NumberHealth> = { head: "Kind", cell: (h) => escapeHtml(KIND_NAMES[h.number.kind]) };

/** Where numbers come from, for a service that has none yet. */
export const NO_NUMBERS_YET =
  "No numbers yet: customers connect theirs on their dashboard's Numbers page (bring your own, or Embedded Signup), or run switchboard admin numbers create.";

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
        <SubmitBeside text="Filter" />
      </form>
      <p class="small muted">{escapeHtml(`${count(props.rows.length)} number${props.rows.length === 1 ? "" : "s"}`)}</p>
      <Table
        rows={props.rows}
        columns={[NUMBER, OWNER, HEALTH, KIND, lastChecked(props.now), checkAgain("numbers")]}
        empty={
          props.filter.state || props.filter.cause
            ? "No number matches: choose another state or cause, or every number."
            : NO_NUMBERS_YET
        }
        caption="Numbers"
      />
    </>
  );
}
