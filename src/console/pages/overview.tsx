import { escapeHtml } from "@kitajs/html";
import { Notice, Time } from "../../html/components.tsx";
import { relativeTime } from "../../html/format.ts";
import { disabledText } from "../../html/endpoint-state.tsx";
import type { EventCounts } from "../../store/overview.ts";
import type { BackupState } from "../backup-report.ts";
import type { CallWindow, Overview } from "../reports.ts";
import { NO_NUMBERS_YET } from "./numbers.tsx";
import { HEALTH, NUMBER, OWNER } from "./number-columns.tsx";
import { accountColumn, Table } from "./table.tsx";
import { count, perMinute, share, Stat } from "./words.tsx";

/** "09:00 UTC", with the date when it is not the day of `now`. */
function sinceText(ms: number, now: number): string {
  const iso = new Date(ms).toISOString();
  const sameDay = iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10);
  return `${sameDay ? "" : `${iso.slice(0, 10)} `}${iso.slice(11, 16)} UTC`;
}

/** "1 of the 6 answers upstream gave was an error": every call counted got an answer, some of them errors. */
function errorsNote(errors: number, answered: number): string {
  if (answered === 0) return "no call reached upstream";
  if (answered === 1) return `the one answer upstream gave was ${errors === 1 ? "an error" : "no error"}`;
  return `${count(errors)} of the ${count(answered)} answers upstream gave ${errors === 1 ? "was an error" : "were errors"}`;
}

/** Events received in a window: every one ingress accepted, and how many went to no endpoint. */
function Events(props: { label: string; events: EventCounts; since: number; now: number }) {
  const { received, unrouted } = props.events;
  const since = `since ${sinceText(props.since, props.now)}`;
  const note =
    unrouted === 0
      ? received === 0
        ? `none accepted ${since}`
        : `${since}, each for an endpoint`
      : `${since}; ${count(unrouted)} for no endpoint (no WABA known, or no endpoint takes their fields)`;
  return <Stat label={props.label} value={count(received)} note={note} />;
}

function Calls(props: { title: string; calls: CallWindow; id: string; now: number }) {
  const c = props.calls;
  return (
    <section class="panel" aria-labelledby={props.id}>
      <h2 id={props.id}>{escapeHtml(props.title)}</h2>
      <div class="stats">
        <Stat
          label="Calls per minute"
          value={perMinute(c.perMinute)}
          note={`counted by the hour since ${sinceText(c.since, props.now)}`}
        />
        <Stat
          label="Upstream error rate"
          value={share(c.errorRate)}
          note={errorsNote(c.upstreamErrors, c.forwarded + c.upstreamErrors)}
          tone={c.errorRate !== null && c.errorRate >= 0.05 ? "warn" : "plain"}
        />
        <Stat label="Refused by Switchboard" value={count(c.refused)} note="key, billing, state or rate limit" />
      </div>
    </section>
  );
}

/** When backups are taken and where they go. */
const backupWhen = (b: NonNullable<BackupState>) =>
  `${b.schedule === null ? "by hand only (no BACKUP_SCHEDULE)" : `on schedule ${b.schedule}`}, at ${b.location}`;

/** No verified backup yet: the directory cannot be listed, the last attempt failed, or none was taken. */
function NoBackupYet(props: { state: NonNullable<BackupState>; failure: string | null }) {
  const b = props.state;
  if (b.unlisted !== null)
    return <Stat label="Last backup" value="Unknown" note={`cannot list ${b.location}: ${b.unlisted}`} tone="warn" />;
  const failed = b.failure !== null;
  return (
    <Stat
      label="Last backup"
      value={failed ? "Failed" : "None yet"}
      note={failed && props.failure ? props.failure : backupWhen(b)}
      tone={failed ? "bad" : b.schedule === null ? "plain" : "warn"}
    />
  );
}

/** The last verified backup and whether a later one failed; where the database is not a SQLite file, none is ours to take. */
function Backup(props: { state: BackupState; now: number }) {
  const b = props.state;
  if (b === null)
    return <Stat label="Backups" value="Not taken here" note="PostgreSQL: back it up with its own tools" />;
  const failure = b.failure && `${b.failure.stage} failed ${relativeTime(b.failure.at, props.now)}`;
  if (b.last === null) return <NoBackupYet state={b} failure={failure} />;
  const failedSince = b.failure !== null && b.failure.at > b.last.at;
  return (
    <Stat
      label="Last backup"
      value={relativeTime(b.last.at, props.now)}
      note={failedSince && failure ? `a later one: ${failure}` : backupWhen(b)}
      tone={failedSince ? "warn" : "ok"}
    />
  );
}

function WebhooksPanel({ o }: { o: Overview }) {
  const d = o.deliveries.day;
  return (
    <section class="panel" aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhooks</h2>
      <div class="stats">
        <Events label="Events received, last hour" events={o.events.hour} since={o.calls.hour.since} now={o.now} />
        <Events label="Events received, last 24 hours" events={o.events.day} since={o.calls.day.since} now={o.now} />
        <Stat label="Deliveries pending" value={count(o.deliveries.pending)} note="waiting for an attempt or a retry" />
        <Stat
          label="Failed attempts, 24 hours"
          value={count(d.failed)}
          note={`${count(d.succeeded)} other attempt${d.succeeded === 1 ? "" : "s"} succeeded`}
          tone={d.failed > 0 ? "warn" : "plain"}
        />
        <Stat label="Parked, 24 hours" value={count(d.parked)} tone={d.parked > 0 ? "bad" : "plain"} />
        <Stat
          label="Endpoints failing now"
          value={count(o.failingEndpoints)}
          note="enabled, last attempts failed"
          tone={o.failingEndpoints > 0 ? "warn" : "plain"}
        />
      </div>
    </section>
  );
}

function ServicePanel({ o }: { o: Overview }) {
  return (
    <section class="panel" aria-labelledby="service-heading">
      <h2 id="service-heading">Service</h2>
      <div class="stats">
        <Stat
          label={o.storage.kind === "postgres" ? "PostgreSQL" : "SQLite"}
          value={o.storage.healthy ? "Answering" : "Not answering"}
          tone={o.storage.healthy ? "ok" : "bad"}
        />
        {o.redis ? (
          <Stat
            label="Redis (rate limits)"
            value={o.redis.healthy ? "Answering" : "Not answering"}
            note={o.redis.healthy ? undefined : "the proxy lets calls through unlimited meanwhile"}
            tone={o.redis.healthy ? "ok" : "bad"}
          />
        ) : (
          <Stat label="Rate limits" value="Local" note="kept in this process: one instance, no Redis" />
        )}
        <Backup state={o.backups} now={o.now} />
      </div>
    </section>
  );
}

export function OverviewPage(props: { o: Overview }) {
  const { o } = props;
  return (
    <>
      <h1>Overview</h1>
      <p class="lead">Every account at a glance. Times are UTC.</p>
      {o.accounts === 0 ? (
        <Notice tone="warn">
          <p>
            No accounts yet. <a href="/operator/accounts">Create the first one</a>, with the dashboard login you give
            your customer.
          </p>
        </Notice>
      ) : (
        ""
      )}
      <div class="columns">
        <Calls title="Proxied calls, last hour" calls={o.calls.hour} id="calls-hour" now={o.now} />
        <Calls title="Proxied calls, last 24 hours" calls={o.calls.day} id="calls-day" now={o.now} />
      </div>
      <WebhooksPanel o={o} />
      <ServicePanel o={o} />

      <h2 id="disabled-heading">Endpoints disabled in the last 24 hours</h2>
      <Table
        rows={o.disabled}
        columns={[
          accountColumn<Overview["disabled"][number]>((e) => ({ id: e.accountId, name: e.accountName })),
          { head: "URL", class: "break", cell: (e) => escapeHtml(e.url) },
          { head: "Why", class: "small", cell: (e) => escapeHtml(disabledText(e.disabledReason)) },
          { head: "Last changed", cell: (e) => <Time at={e.updatedAt} now={o.now} /> },
        ]}
        empty="None: no endpoint was disabled in the last 24 hours."
        labelledBy="disabled-heading"
      />

      <div class="row spread">
        <h2 id="unusable-heading">Numbers not connected</h2>
        <a href="/operator/numbers?state=unusable">All, by state and cause</a>
      </div>
      <Table
        rows={o.notConnected}
        columns={[NUMBER, OWNER, HEALTH]}
        empty={
          o.numbers === 0
            ? NO_NUMBERS_YET
            : o.numbers === 1
              ? "The only number is connected."
              : `All ${count(o.numbers)} numbers are connected.`
        }
        labelledBy="unusable-heading"
      />
    </>
  );
}
