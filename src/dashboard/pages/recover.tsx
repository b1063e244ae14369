import type { recoveryView } from "../../webhooks/recover.ts";
import { Time } from "../../html/components.tsx";

export type RecoveryShape = ReturnType<typeof recoveryView>;

/** A recover's `since` is null only when stored before times were checked, past the range of dates (issue 26). */
const SINCE_UNREADABLE = "a time past the last date there is";

/** Progress of a recover in words. */
function progressText(r: RecoveryShape): string {
  const verb = r.status === "running" ? "Recovering" : "Recovered";
  return `${verb}: ${r.replayed} replayed of ${r.found} parked so far, ${r.skipped_expired} skipped (payload gone), ${r.skipped_replayed} already replayed.`;
}

/**
 * "Replay every parked delivery since <time>" and the latest recover's progress. While one runs
 * the section reloads itself every second (htmx), so the page shows it move.
 */
export function RecoverSection(props: { endpointId: string; recovery: RecoveryShape | null; now: number }) {
  const base = `/dashboard/endpoints/${encodeURIComponent(props.endpointId)}/recover`;
  const r = props.recovery;
  const running = r?.status === "running";
  return (
    <section
      class="panel"
      id="recover"
      aria-labelledby="recover-heading"
      hx-get={running ? base : undefined}
      hx-trigger={running ? "every 1s" : undefined}
      hx-swap="outerHTML"
      hx-select="#recover"
    >
      <h2 id="recover-heading">Recover parked deliveries</h2>
      <p>
        Replays every parked delivery of this endpoint created since the time you give, each as a new delivery.
        Deliveries replayed before are not replayed again; payloads already deleted are skipped.
      </p>
      {r ? (
        <p role="status" aria-live="polite" safe>
          {progressText(r)}
        </p>
      ) : (
        ""
      )}
      {r ? (
        <p class="small muted">
          Started <Time at={r.started_at} now={props.now} /> for deliveries since{" "}
          <Time at={r.since} now={props.now} none={SINCE_UNREADABLE} />.
        </p>
      ) : (
        ""
      )}
      <form method="post" action={base} class="row">
        <div>
          <label for="recover-since">Since (UTC)</label>
          <input id="recover-since" name="since" type="datetime-local" required />
        </div>
        <div class="filter-submit">
          <button type="submit" disabled={running}>
            Replay parked deliveries
          </button>
        </div>
      </form>
    </section>
  );
}
