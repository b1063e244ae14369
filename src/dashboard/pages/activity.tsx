import { escapeHtml } from "@kitajs/html";
import type { AccountAuditView, AuditView } from "../../audit/queries.ts";
import { ACTION_WORDS, actorWords } from "../../audit/words.ts";
import { AUDIT_ACTIONS } from "../../store/vocabulary.ts";
import { Pager, Time, TimeRangeAndFilter } from "../components.tsx";
import { CardsTable, FilterSelect, isFiltered, pageLinks } from "../list.tsx";

export interface ActivityFilter {
  action?: string;
  actor?: string;
  from?: string;
  to?: string;
}

/** A before or after value as text: none, a list, or the value itself. */
function valueText(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.join(", ");
  return typeof value === "string" ? value : JSON.stringify(value);
}

function Changes(props: { changes: AuditView["changes"] }) {
  const fields = Object.entries(props.changes);
  if (fields.length === 0) return <span class="muted">no fields</span>;
  return (
    <ul class="plain">
      {fields.map(([field, [before, after]]) => (
        <li>
          <span class="mono" safe>
            {field}
          </span>
          : <span safe>{valueText(before)}</span> → <span safe>{valueText(after)}</span>
        </li>
      ))}
    </ul>
  );
}

/** The "What" filter of an audit list: every action, or every action on a kind of object. */
export function ActionChoice(props: { kinds: string[]; value: string | undefined }) {
  return (
    <FilterSelect
      id="filter-action"
      name="action"
      label="What"
      any="Everything"
      value={props.value}
      options={[
        ...props.kinds.map((k) => ({ value: k, text: `All ${k.replaceAll("_", " ")} changes` })),
        ...AUDIT_ACTIONS.map((a) => ({ value: a, text: ACTION_WORDS[a] })),
      ]}
    />
  );
}

/**
 * Audit entries as a table (cards on a phone): when, who, what on which object, the fields before →
 * after, from which address; with `account`, each entry's account too (the operator's list).
 */
export function AuditTable(props: {
  entries: AccountAuditView[];
  now: number;
  caption: string;
  account?: (accountId: string | null) => JSX.Element;
}) {
  return (
    <CardsTable
      caption={props.caption}
      columns={["Time", "Who", ...(props.account ? ["Account"] : []), "What", "Changes", "From"]}
    >
      {props.entries.map((e) => (
        <tr>
          <td data-label="Time">
            <Time at={e.at} now={props.now} />
          </td>
          <td data-label="Who" class="break" safe>
            {actorWords(e.actor)}
          </td>
          {props.account ? <td data-label="Account">{props.account(e.account_id)}</td> : ""}
          <td data-label="What" class="break">
            {escapeHtml(ACTION_WORDS[e.action])}
            <div class="small mono" safe>
              {`${e.object.kind} ${e.object.id}`}
            </div>
          </td>
          <td data-label="Changes" class="break small">
            <Changes changes={e.changes} />
          </td>
          <td data-label="From" class="mono small" safe>
            {e.ip ?? ""}
          </td>
        </tr>
      ))}
    </CardsTable>
  );
}

/** The account's audit log: who changed what, when, from where, before → after. */
export function ActivityPage(props: {
  entries: AccountAuditView[];
  kinds: string[];
  filter: ActivityFilter;
  nextCursor: string | null;
  firstPage: boolean;
  now: number;
}) {
  const f = props.filter;
  return (
    <>
      <h1>Activity</h1>
      <p class="lead">
        Every change made to this account, newest first: by you and your colleagues, by your operator, and by
        Switchboard itself (an endpoint disabled after failing). Secrets are never shown, only that they changed.
      </p>
      <search aria-label="Filter activity">
        <form method="get" action="/dashboard/activity" class="panel row">
          <ActionChoice kinds={props.kinds} value={f.action} />
          <div>
            <label for="filter-actor">Who (email or id)</label>
            <input
              id="filter-actor"
              name="actor"
              type="text"
              maxlength="320"
              value={f.actor ?? ""}
              placeholder="you@example.com"
            />
          </div>
          <TimeRangeAndFilter from={f.from} to={f.to} />
        </form>
      </search>
      {props.entries.length === 0 ? (
        <p class="panel">
          {isFiltered(f) ? (
            <>
              No activity matches this filter. <a href="/dashboard/activity">Show all of it</a>.
            </>
          ) : (
            "No activity yet: sign-ins and every change to keys, endpoints, numbers and settings are listed here."
          )}
        </p>
      ) : (
        <AuditTable entries={props.entries} now={props.now} caption="Activity" />
      )}
      <Pager firstPage={props.firstPage} nextCursor={props.nextCursor} link={pageLinks("/dashboard/activity", f)} />
    </>
  );
}
