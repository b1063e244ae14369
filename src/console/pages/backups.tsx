import { escapeHtml } from "@kitajs/html";
import type { Manifest } from "../../backup/manifest.ts";
import { Notice, Time } from "../../html/components.tsx";
import { relativeTime } from "../../html/format.ts";
import type { BackupState } from "../backup-report.ts";
import { Table } from "./table.tsx";
import { count, Stat } from "./words.tsx";

const MB = 1024 * 1024;
/** A file's size: kilobytes below a megabyte, megabytes with a decimal below ten. */
const size = (bytes: number) =>
  bytes < MB ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0)} MB`;

/** A backup's rows that an operator looks for first: accounts, and the request log's calls. */
function rows(m: Manifest): string {
  const calls = m.counts.request_log;
  return `${count(m.counts.accounts ?? 0)} accounts${calls === undefined ? ", no request log" : `, ${count(calls)} logged calls`}`;
}

export interface BackupsPageProps {
  state: BackupState;
  now: number;
  flash?: JSX.Element;
}

/**
 * The console's Backups page (docs/backups.md): the verified backups at BACKUP_TO (and where that
 * is), how old the newest is, a backup under way, "Take a backup", and each one's download (the
 * operator API's, which records who downloaded it).
 */
export function BackupsPage(props: BackupsPageProps) {
  const { state: b, flash = "" } = props;
  if (b === null)
    return (
      <>
        <h1>Backups</h1>
        <p class="panel">
          This deployment's database is PostgreSQL: back it up with its own tools (pg_dump, point-in-time recovery).
        </p>
      </>
    );
  const failedSince = b.failure !== null && (b.last === null || b.failure.at > b.last.at);
  return (
    <>
      <h1>Backups</h1>
      <p class="lead">
        Verified backups at <code safe>{b.location}</code>, newest first. Each holds the database and the request log,
        with a manifest signed under a key derived from ENCRYPTION_KEY; restore one with{" "}
        <code>switchboard restore</code>.
      </p>
      {flash}
      {b.unlisted !== null ? (
        <Notice tone="bad">
          <p>
            The backups at <code safe>{b.location}</code> cannot be listed: <span safe>{b.unlisted}</span>
          </p>
        </Notice>
      ) : (
        ""
      )}
      <div class="stats">
        <Stat
          label="Last good backup"
          value={b.last === null ? "None yet" : relativeTime(b.last.at, props.now)}
          note={
            b.last?.name ?? (b.schedule === null ? "no BACKUP_SCHEDULE: by hand only" : `on schedule ${b.schedule}`)
          }
          tone={b.last === null ? "warn" : "ok"}
        />
        <Stat
          label="Last failure"
          value={b.failure === null ? "None" : relativeTime(b.failure.at, props.now)}
          note={b.failure ? `${b.failure.stage}: ${b.failure.error}` : "since the server started"}
          tone={failedSince ? "bad" : "plain"}
        />
        <Stat
          label="Now"
          value={b.running ? `Taking a backup: ${b.running.step}` : "Idle"}
          note={
            b.running ? `${b.running.name ?? "starting"}, began ${relativeTime(b.running.at, props.now)}` : undefined
          }
        />
      </div>
      <form method="post" action="/operator/backups" class="row actions">
        <button type="submit" class="button" disabled={b.running !== null}>
          Take a backup
        </button>
        <span class="small muted">It runs in the background, at a low priority; the server goes on serving.</span>
      </form>
      <h2 id="backups-heading">At {escapeHtml(b.location)}</h2>
      <Table<Manifest>
        rows={b.backups}
        columns={[
          { head: "Taken", cell: (m) => <Time at={m.at} now={props.now} /> },
          { head: "Name", class: "break small", cell: (m) => escapeHtml(m.name) },
          { head: "Size", num: true, cell: (m) => escapeHtml(size(m.bytes)) },
          { head: "Holds", class: "small", cell: (m) => escapeHtml(rows(m)) },
          {
            head: "Download",
            hidden: true,
            cell: (m) => (
              <a href={`/admin/backups/${encodeURIComponent(m.name)}`} download="">
                Download
              </a>
            ),
          },
        ]}
        empty={b.unlisted === null ? "No backup there yet." : "Not listed."}
        labelledBy="backups-heading"
      />
    </>
  );
}
