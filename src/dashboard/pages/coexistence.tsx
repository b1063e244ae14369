import { escapeHtml } from "@kitajs/html";
import type { CoexistenceView, PreflightResult } from "../../onboarding/coexistence.ts";
import { Badge, Notice, Time, type Tone } from "../../html/components.tsx";

type Sync = CoexistenceView["syncs"][number];

const RESULTS: Record<PreflightResult, { tone: Tone; text: string }> = {
  passed: { tone: "ok", text: "Answered 2xx" },
  retrying: { tone: "warn", text: "Not yet: retrying" },
  waiting: { tone: "plain", text: "Sending…" },
  failed: { tone: "bad", text: "Failed" },
};

function Preflight(props: { sync: Sync; now: number }) {
  const p = props.sync.preflight;
  if (!p.at) return <p class="small">No pre-flight yet.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="small">
          Pre-flight <Time at={p.at} now={props.now} />
        </caption>
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Result</th>
            <th scope="col">Last answer</th>
          </tr>
        </thead>
        <tbody>
          {p.endpoints.map((e) => (
            <tr>
              <td class="mono small">
                <a href={`/dashboard/deliveries/${encodeURIComponent(e.delivery_id)}`} safe>
                  {e.url ?? e.endpoint_id}
                </a>
              </td>
              <td>
                <Badge {...RESULTS[e.result]} />
              </td>
              <td class="small">
                {e.last_status_code !== null ? (
                  escapeHtml(`HTTP ${e.last_status_code}`)
                ) : (
                  <span safe>{e.last_error ?? ""}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SyncPanel(props: { base: string; sync: Sync; now: number }) {
  const { sync } = props;
  const id = `sync-${sync.sync_type}`;
  return (
    <section class="panel" aria-labelledby={`${id}-heading`} data-sync={sync.sync_type}>
      <h2 id={`${id}-heading`}>{sync.label}</h2>
      <p>
        Sends {sync.what} as <code>{sync.field}</code> events to your endpoints.{" "}
        {sync.field === "history"
          ? "History payloads are deleted as soon as each delivery ends: an endpoint that is not ready loses them for good."
          : ""}
      </p>
      {sync.started ? (
        <Notice tone="ok">
          <p>
            Started <Time at={sync.started.at} now={props.now} />
            {sync.started.overridden ? " without a passed pre-flight" : ""}. The platform allows it once.
          </p>
        </Notice>
      ) : (
        <>
          {sync.receiving_endpoints === 0 ? (
            <Notice tone="warn">
              <p>
                No enabled endpoint receives <code>{sync.field}</code> for this number: add the field to an endpoint
                first, or {sync.what} reach nobody.
              </p>
            </Notice>
          ) : (
            <p class="small">
              {escapeHtml(String(sync.receiving_endpoints))} enabled endpoint(s) receive <code>{sync.field}</code> for
              this number. The pre-flight sends each one the test event (<code>proxy_test</code>); the sync can start
              once one of them answered 2xx.
            </p>
          )}
          <Preflight sync={sync} now={props.now} />
          <div class="row">
            <form method="post" action={`${props.base}/preflight`}>
              <input type="hidden" name="sync_type" value={sync.sync_type} />
              <button type="submit" class="secondary">
                Run pre-flight
              </button>
            </form>
            <form method="post" action={`${props.base}/smb-sync`}>
              <input type="hidden" name="sync_type" value={sync.sync_type} />
              <button type="submit" disabled={!sync.can_start || !sync.preflight.passed}>
                Start {escapeHtml(sync.label.toLowerCase())} sync
              </button>
            </form>
          </div>
          {sync.can_start && !sync.preflight.passed ? (
            <form method="post" action={`${props.base}/smb-sync`} class="stack">
              <input type="hidden" name="sync_type" value={sync.sync_type} />
              <input type="hidden" name="override" value="true" />
              <label class="choice">
                <input type="checkbox" name="confirm" value="yes" required /> I understand that events my endpoints do
                not take are lost for good
              </label>
              <div>
                <button type="submit" class="danger">
                  Start without a passed pre-flight
                </button>
              </div>
            </form>
          ) : (
            ""
          )}
        </>
      )}
    </section>
  );
}

/**
 * A coexistence number's two one-time syncs. While a pre-flight waits for an answer the syncs
 * reload themselves every second (htmx), so the sync button turns on as soon as one passed.
 */
export function CoexistencePage(props: { name: string; view: CoexistenceView; now: number; flash?: JSX.Element }) {
  const { view, flash = "" } = props;
  const base = `/dashboard/numbers/${encodeURIComponent(view.phone_number_id)}`;
  const pending = view.syncs.some(
    (s) => !s.started && s.preflight.endpoints.some((e) => e.result === "waiting" || e.result === "retrying"),
  );
  return (
    <>
      <h1>
        Contacts and history of <span safe>{props.name}</span>
      </h1>
      <p class="lead">
        The platform sends a coexistence number's contacts and chat history from the business app once each, when asked
        within 24 hours of onboarding.{" "}
        {view.window_open ? (
          <>
            That window ends <Time at={view.window_ends_at} now={props.now} />.
          </>
        ) : (
          <>
            That window ended <Time at={view.window_ends_at} now={props.now} />.
          </>
        )}
      </p>
      {flash}
      <div
        id="syncs"
        hx-get={pending ? `${base}/coexistence` : undefined}
        hx-trigger={pending ? "every 1s" : undefined}
        hx-select="#syncs"
        hx-swap="outerHTML"
      >
        {view.syncs.map((sync) => (
          <SyncPanel base={base} sync={sync} now={props.now} />
        ))}
      </div>
      <p>
        <a href="/dashboard/numbers">Back to numbers</a>
      </p>
    </>
  );
}
