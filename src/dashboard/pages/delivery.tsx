import { escapeHtml } from "@kitajs/html";
import { ActionButton, CodeList, Notice, Time } from "../../html/components.tsx";
import { formatDuration } from "../../html/format.ts";
import { CardsTable } from "../../html/list.tsx";
import type { AttemptShape, DeliveryShape, EndpointShape } from "../../html/webhook-shapes.ts";
import { attemptOutcome, DeliveryStatus, deliveryPath, parkedText } from "./delivery-status.tsx";

function prettyPayload(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

export function AttemptsTable(props: { attempts: AttemptShape[]; now: number }) {
  if (props.attempts.length === 0) return <p class="muted">No attempt yet.</p>;
  return (
    <CardsTable
      caption="Attempts"
      columns={[{ text: "#", num: true }, "Time", "Outcome", { text: "Duration", num: true }, "Response (first 1 KB)"]}
    >
      {props.attempts.map((a) => (
        <tr>
          <td data-label="Attempt" class="num">
            {a.number}
          </td>
          <td data-label="Time">
            <Time at={a.at} now={props.now} />
          </td>
          <td data-label="Outcome">{attemptOutcome(a)}</td>
          <td data-label="Duration" class="num">
            {escapeHtml(formatDuration(a.duration_ms))}
          </td>
          <td data-label="Response">
            {a.response_excerpt ? (
              <pre class="wrap excerpt" safe>
                {a.response_excerpt}
              </pre>
            ) : (
              <span class="muted">none</span>
            )}
          </td>
        </tr>
      ))}
    </CardsTable>
  );
}

export function DeliveryPage(props: {
  delivery: DeliveryShape;
  attempts: AttemptShape[];
  payload: string | null;
  endpoint: EndpointShape | null;
  now: number;
  flash?: JSX.Element;
}) {
  const { delivery: d, flash = "" } = props;
  return (
    <>
      <p class="small">
        <a href="/dashboard/deliveries">← Deliveries</a>
      </p>
      <h1>
        Delivery{" "}
        <span class="mono break" safe>
          {d.id}
        </span>
      </h1>
      {flash}
      {d.status === "parked" ? (
        <Notice tone="bad">
          <p>
            <strong>Parked.</strong> <span safe>{parkedText(d.parked_reason)}</span>
          </p>
        </Notice>
      ) : (
        ""
      )}
      <section class="panel" aria-labelledby="delivery-heading">
        <h2 id="delivery-heading">Summary</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <DeliveryStatus delivery={d} />
          </dd>
          <dt>webhook-id</dt>
          <dd class="mono" safe>
            {d.id}
          </dd>
          <dt>Endpoint</dt>
          <dd>
            {props.endpoint ? (
              <a href={`/dashboard/endpoints/${encodeURIComponent(d.endpoint_id)}`} safe>
                {props.endpoint.url}
              </a>
            ) : (
              <span safe>{d.endpoint_id}</span>
            )}
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={d.created_at} now={props.now} />
          </dd>
          <dt>Attempts</dt>
          <dd>{d.attempt_count} of at most 8</dd>
          <dt>Next attempt</dt>
          <dd>
            {d.status === "pending" && d.next_attempt_at ? (
              <Time at={d.next_attempt_at} now={props.now} />
            ) : (
              <span class="muted">none{d.status === "succeeded" ? " (delivered)" : ""}</span>
            )}
          </dd>
          <dt>Events</dt>
          <dd>
            <CodeList items={d.fields} />
            {d.is_test ? " (test event)" : ""}
          </dd>
          <dt>Signature</dt>
          <dd>
            {d.signature === "platform"
              ? "Platform: X-Hub-Signature-256 over one change, and the Standard Webhooks headers"
              : "Standard Webhooks"}
          </dd>
          {d.replay_of ? (
            <>
              <dt>Replay of</dt>
              <dd>
                <a href={deliveryPath(d.replay_of)} class="mono" safe>
                  {d.replay_of}
                </a>
              </dd>
            </>
          ) : (
            ""
          )}
        </dl>
        <div class="row actions">
          <ActionButton action={`${deliveryPath(d.id)}/replay`} label="Replay" tone="primary" />
          <span class="small muted">Sends the same body again as a new delivery with a new webhook-id.</span>
        </div>
      </section>
      <section aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts</h2>
        <AttemptsTable attempts={props.attempts} now={props.now} />
      </section>
      <section class="panel" aria-labelledby="payload-heading">
        <h2 id="payload-heading">Payload</h2>
        {props.payload === null ? (
          <p>
            The payload has been deleted: <code>history</code> payloads go as soon as they are delivered or parked,
            others at the end of the retention window.
          </p>
        ) : (
          <>
            <p class="small muted">Formatted for reading; it was sent byte for byte as received.</p>
            <pre safe>{prettyPayload(props.payload)}</pre>
          </>
        )}
      </section>
    </>
  );
}

/**
 * The result of Send test as it arrives (swapped in by htmx): polls while the first attempt is
 * still to come, then shows how it went.
 */
export function TestResult(props: { delivery: DeliveryShape; attempts: AttemptShape[]; now: number }) {
  const d = props.delivery;
  const link = (
    <a href={deliveryPath(d.id)} class="mono" safe>
      {d.id}
    </a>
  );
  const last = props.attempts[props.attempts.length - 1];
  if (!last) {
    return (
      <div hx-get={`${deliveryPath(d.id)}/result`} hx-trigger="load delay:1s" hx-swap="outerHTML">
        <Notice tone="warn">
          <p>Test event queued as delivery {link}. Waiting for the first attempt…</p>
        </Notice>
      </div>
    );
  }
  if (d.status === "succeeded") {
    return (
      <Notice tone="ok">
        <p>
          Test delivered: the receiver answered HTTP {last.status_code} in{" "}
          {escapeHtml(formatDuration(last.duration_ms))}. Delivery {link}.
        </p>
      </Notice>
    );
  }
  return (
    <Notice tone="bad">
      <p>
        Test attempt {last.number} failed: {attemptOutcome(last)}.
      </p>
      {d.status === "pending" && d.next_attempt_at ? (
        <p>
          Next attempt <Time at={d.next_attempt_at} now={props.now} />. Delivery {link}.
        </p>
      ) : (
        <p>
          <span safe>{parkedText(d.parked_reason)}</span> Delivery {link}.
        </p>
      )}
    </Notice>
  );
}
