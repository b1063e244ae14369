import { escapeHtml } from "@kitajs/html";
import type { AccountAuditView, AuditView } from "../audit/queries.ts";
import { ACTION_WORDS, actorWords } from "../audit/words.ts";
import { AUDIT_ACTIONS } from "../store/vocabulary.ts";
import { Time } from "./components.tsx";
import { CardsTable, FilterSelect } from "./list.tsx";

/**
 * The audit log's pieces both UIs show: the account's Activity page and the console's Audit log
 * list the same entries with the same filters.
 */

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

/** The "Who" filter of an audit list: an actor's email or id; `example` is the placeholder. */
export function ActorField(props: { value: string | undefined; example: string }) {
  return (
    <div>
      <label for="filter-actor">Who (email or id)</label>
      <input
        id="filter-actor"
        name="actor"
        type="text"
        maxlength="320"
        value={props.value ?? ""}
        placeholder={props.example}
      />
    </div>
  );
}
