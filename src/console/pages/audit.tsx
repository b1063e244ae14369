import type { AuditView } from "../../audit/queries.ts";
import { Notice, Pager, TimeRangeAndFilter } from "../../html/components.tsx";
import { ActionChoice, ActorField, AuditTable } from "../../html/audit.tsx";
import type { Account } from "../../store/types.ts";
import { AccountChoice } from "./fields.tsx";
import { accountPath } from "./words.tsx";

/** The Audit log page's filter, as the form sends it (times as the datetime fields give them, UTC). */
export interface AuditPageFilter {
  account_id?: string;
  actor?: string;
  action?: string;
  from?: string;
  to?: string;
}

export interface AuditPageProps {
  entries: AuditView[];
  accounts: Account[];
  kinds: string[];
  filter: AuditPageFilter;
  /** Why a hand-made filter was refused; the list is then empty. */
  refused?: string;
  nextCursor: string | null;
  firstPage: boolean;
  now: number;
}

/** Every account's audit log, newest first, filtered by account, actor, action and time. */
export function AuditPage(props: AuditPageProps) {
  const f = props.filter;
  const pageLink = (cursor: string | null) => {
    const query = new URLSearchParams(Object.entries(f).filter(([, v]) => v) as [string, string][]);
    if (cursor) query.set("cursor", cursor);
    const text = query.toString();
    return `/operator/audit${text ? `?${text}` : ""}`;
  };
  const names = new Map(props.accounts.map((a) => [a.id, a.name]));
  const account = (id: string | null) => {
    if (id === null) return <span class="muted">none</span>;
    const name = names.get(id);
    return name === undefined ? (
      <span class="mono small" safe>
        {id}
      </span>
    ) : (
      <a href={accountPath(id)} safe>
        {name}
      </a>
    );
  };
  const filtered = Object.values(f).some(Boolean);
  return (
    <>
      <h1>Audit log</h1>
      <p class="lead">
        Every change of every account and of the service, newest first: who made it (an operator, the operator API's
        token or the command line, an account's user, Switchboard itself), what and on which object, the fields before →
        after, and from which address. Secrets are never shown, only that they changed. Times are UTC.
      </p>
      <search aria-label="Filter the audit log">
        <form method="get" action="/operator/audit" class="row filters">
          <AccountChoice id="filter-account" accounts={props.accounts} value={f.account_id} />
          <ActorField value={f.actor} example="someone@example.com" />
          <ActionChoice kinds={props.kinds} value={f.action} />
          <TimeRangeAndFilter from={f.from} to={f.to} />
        </form>
      </search>
      {props.refused ? (
        <Notice tone="bad">
          <p safe>{props.refused}</p>
        </Notice>
      ) : props.entries.length === 0 ? (
        <p class="panel">
          {filtered ? (
            <>
              No entries match this filter. <a href="/operator/audit">Show them all</a>.
            </>
          ) : (
            "No entries yet: every change made here, through the operator API, the command line or the dashboards is listed as it happens."
          )}
        </p>
      ) : (
        <AuditTable entries={props.entries} now={props.now} caption="Audit log" account={account} />
      )}
      <Pager firstPage={props.firstPage} nextCursor={props.nextCursor} link={pageLink} />
    </>
  );
}
