import { escapeHtml, type Children } from "@kitajs/html";
import { iso } from "../http/iso-time.ts";
import { formatTime, relativeTime } from "./format.ts";

export type Tone = "ok" | "warn" | "bad" | "plain";

export function Notice(props: { tone: Exclude<Tone, "plain">; children: Children; id?: string }) {
  return (
    <div class={`notice ${props.tone}`} role={props.tone === "bad" ? "alert" : "status"} id={props.id}>
      {props.children}
    </div>
  );
}

export function Badge(props: { tone: Tone; text: string }) {
  return (
    <span class={`badge ${props.tone}`} safe>
      {props.text}
    </span>
  );
}

/**
 * A time as text, with the exact instant for machines and a "5 min ago" beside it; `none` (or
 * "never") for no time, or one no date holds.
 */
export function Time(props: { at: number | string | null; now: number; relative?: boolean; none?: string }) {
  const ms = typeof props.at === "string" ? Date.parse(props.at) : props.at;
  const at = ms === null ? null : iso(ms);
  if (ms === null || at === null)
    return (
      <span class="muted" safe>
        {props.none ?? "never"}
      </span>
    );
  return (
    <time datetime={at}>
      {escapeHtml(formatTime(ms))}
      {props.relative === false ? "" : <span class="muted small"> ({escapeHtml(relativeTime(ms, props.now))})</span>}
    </time>
  );
}

/**
 * A secret shown exactly once, in a read-only field with a copy button (dashboard.js) that says
 * "Copied" to screen readers too.
 */
export function SecretOnce(props: { id: string; label: string; value: string; children?: Children }) {
  return (
    <Notice tone="warn">
      <label for={props.id}>{escapeHtml(props.label)}</label>
      <p class="small">{props.children ?? "Copy it now: it is shown only this once."}</p>
      <div class="copy">
        <input type="text" id={props.id} value={props.value} readonly autocomplete="off" spellcheck="false" />
        <button type="button" class="secondary" data-copy={props.id} aria-describedby={`${props.id}-status`}>
          Copy
        </button>
      </div>
      <span id={`${props.id}-status`} class="visually-hidden" aria-live="polite"></span>
    </Notice>
  );
}

/** A one-button form (POST), for actions such as Revoke or Enable. */
export function ActionButton(props: {
  action: string;
  label: string;
  tone?: "primary" | "secondary" | "danger";
  confirm?: string;
  name?: string;
}) {
  const tone = props.tone ?? "secondary";
  return (
    <form method="post" action={props.action} data-confirm={props.confirm}>
      <button type="submit" class={tone === "primary" ? undefined : tone} aria-label={props.name}>
        {escapeHtml(props.label)}
      </button>
    </form>
  );
}

/** Names in code type, separated by commas: an array of elements, each name escaped. */
export function CodeList(props: { items: string[] }): JSX.Element {
  return (
    <>
      {props.items.map((item, i) => (
        <>
          {i === 0 ? "" : ", "}
          <code safe>{item}</code>
        </>
      ))}
    </>
  );
}

export function FieldError(props: { id: string; message: string | undefined }) {
  if (!props.message) return "";
  return (
    <span class="error-text" id={props.id} safe>
      {props.message}
    </span>
  );
}

/** Keyset pages of a newest-first list: back to the newest, and on to older rows while there are some. */
export function Pager(props: {
  firstPage: boolean;
  nextCursor: string | null;
  link: (cursor: string | null) => string;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      {props.firstPage ? (
        ""
      ) : (
        <a class="button secondary" href={props.link(null)}>
          Newest
        </a>
      )}
      {props.nextCursor ? (
        <a class="button secondary" href={props.link(props.nextCursor)} rel="next">
          Older
        </a>
      ) : (
        ""
      )}
    </nav>
  );
}

/**
 * The end of a list's filter form: its time range (UTC, as every time reads) and the Filter button.
 * `ids` names the two fields where a page already used other names.
 */
export function TimeRangeAndFilter(props: { from?: string; to?: string; ids?: { from: string; to: string } }) {
  const ids = props.ids ?? { from: "filter-from", to: "filter-to" };
  return (
    <>
      <div>
        <label for={ids.from}>From (UTC)</label>
        <input id={ids.from} name="from" type="datetime-local" value={props.from ?? ""} />
      </div>
      <div>
        <label for={ids.to}>To (UTC)</label>
        <input id={ids.to} name="to" type="datetime-local" value={props.to ?? ""} />
      </div>
      <div class="filter-submit">
        <button type="submit">Filter</button>
      </div>
    </>
  );
}
