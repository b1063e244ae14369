import type { AccountAuditView } from "../../audit/queries.ts";
import { ActionChoice, ActorField, AuditTable } from "../../html/audit.tsx";
import { Pager, TimeRangeAndFilter } from "../../html/components.tsx";
import { isFiltered, pageLinks } from "../../html/list.tsx";

export interface ActivityFilter {
  action?: string;
  actor?: string;
  from?: string;
  to?: string;
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
          <ActorField value={f.actor} example="you@example.com" />
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
