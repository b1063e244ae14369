import type { Timeline } from "../../messages/timeline.ts";
import { Badge, Time, type Tone } from "../../html/components.tsx";
import { DeliveryStatus } from "./delivery-status.tsx";

const STATUS_TONE: Record<string, Tone> = { sent: "plain", delivered: "ok", read: "ok", failed: "bad" };

/** A message's timeline: the call that sent it, then each event about it with its deliveries. */
export function MessagePage(props: { timeline: Timeline; endpointUrl: (id: string) => string; now: number }) {
  const t = props.timeline;
  return (
    <>
      <p>
        <a href="/dashboard/requests">← Requests</a>
      </p>
      <h1>
        Message{" "}
        <span class="mono break" safe>
          {t.message_id}
        </span>
      </h1>
      <ol class="timeline stack" aria-label="What happened to this message">
        {t.sent_by.length === 0 ? (
          <li class="panel muted">
            Not sent through Switchboard (or its call is past the retention window): only the platform's events about it
            are here.
          </li>
        ) : (
          t.sent_by.map((r) => (
            <li class="panel">
              <h2>
                <Time at={r.at} now={props.now} /> Sent
              </h2>
              <p>
                By the call{" "}
                <a class="mono" href={`/dashboard/requests/${encodeURIComponent(r.id)}`} safe>
                  {r.id}
                </a>{" "}
                (<span safe>{r.route ?? r.method}</span>) from number{" "}
                <span class="mono" safe>
                  {r.phone_number_id ?? ""}
                </span>
                : upstream answered {r.upstream_status ?? r.status}.
              </p>
            </li>
          ))
        )}
        {t.events.map((e) => (
          <li class="panel">
            <h2>
              <Time at={e.received_at} now={props.now} />{" "}
              {e.kind === "inbound" ? (
                <Badge tone="plain" text="Received" />
              ) : (
                <Badge tone={STATUS_TONE[e.status ?? ""] ?? "plain"} text={e.status ?? "status"} />
              )}
              {e.error_code !== null ? (
                <>
                  {" "}
                  <span class="error-text">error {e.error_code}</span>
                </>
              ) : (
                ""
              )}
            </h2>
            {e.deliveries.length === 0 ? (
              <p class="muted">No endpoint was subscribed to it.</p>
            ) : (
              <ul class="plain">
                {e.deliveries.map((d) => (
                  <li>
                    <DeliveryStatus delivery={d} /> to{" "}
                    <span class="break" safe>
                      {props.endpointUrl(d.endpoint_id)}
                    </span>
                    :{" "}
                    <a class="mono" href={`/dashboard/deliveries/${encodeURIComponent(d.id)}`} safe>
                      {d.id}
                    </a>
                    , {d.attempts.length} attempt{d.attempts.length === 1 ? "" : "s"}
                    {d.attempts.length > 0 ? (
                      <span class="muted"> (last: {d.attempts.at(-1)?.status_code ?? "no answer"})</span>
                    ) : (
                      ""
                    )}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}
