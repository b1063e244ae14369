import { escapeHtml } from "@kitajs/html";
import { ActionButton, Badge, CodeList, Notice, Pager, Time, type Tone } from "../components.tsx";
import { formatDuration } from "../format.ts";
import { EVENT_FIELDS } from "../../webhooks/fields.ts";
import type { AttemptShape, DeliveryShape, EndpointShape } from "../webhook-shapes.ts";

const deliveryPath = (id: string) => `/dashboard/deliveries/${encodeURIComponent(id)}`;

const STATUS: Record<DeliveryShape["status"], { text: string; tone: Tone }> = {
  pending: { text: "In progress", tone: "warn" },
  succeeded: { text: "Succeeded", tone: "ok" },
  parked: { text: "Parked", tone: "bad" },
};

/** Why a delivery was parked, in words. */
export function parkedText(reason: DeliveryShape["parked_reason"]): string {
  switch (reason) {
    case "attempts_exhausted":
      return "Every attempt failed; it will not be retried automatically. Replay it once the receiver works.";
    case "gone":
      return "The receiver answered 410 Gone, so the endpoint was disabled. Enable it, then replay.";
    case "endpoint_disabled":
      return "The endpoint was disabled when this delivery came due. Enable it, then replay.";
    case "payload_missing":
      return "The payload was deleted before it could be delivered.";
    default:
      return "It will not be retried automatically.";
  }
}

export function DeliveryStatus(props: { delivery: DeliveryShape }) {
  const s = STATUS[props.delivery.status];
  return <Badge tone={s.tone} text={s.text} />;
}

/** An attempt's outcome in one line: the HTTP status, or why no answer came (blocked address, time-out…). */
function attemptOutcome(a: AttemptShape): JSX.Element {
  if (a.error?.startsWith("blocked: ")) {
    return (
      <>
        <Badge tone="bad" text="Blocked" /> <span safe>{a.error.slice("blocked: ".length)}</span>
      </>
    );
  }
  if (a.status_code !== null) {
    const ok = a.status_code >= 200 && a.status_code < 300;
    return <Badge tone={ok ? "ok" : "bad"} text={`HTTP ${a.status_code}`} />;
  }
  return (
    <>
      <Badge tone="bad" text="No answer" /> <span safe>{a.error ?? ""}</span>
    </>
  );
}

export function DeliveriesPage(props: {
  deliveries: (DeliveryShape & { about: string })[];
  endpoints: EndpointShape[];
  numbers: string[];
  filter: {
    endpoint_id?: string;
    status?: string;
    field?: string;
    number?: string;
    message_id?: string;
    from?: string;
    to?: string;
    last_status?: string;
  };
  nextCursor: string | null;
  firstPage: boolean;
  now: number;
}) {
  const urlOf = (id: string) => props.endpoints.find((e) => e.id === id)?.url ?? id;
  const pageLink = (cursor: string | null) => {
    const query = new URLSearchParams(
      Object.entries(props.filter).filter(([name, v]) => v && name !== "cursor") as [string, string][],
    );
    if (cursor) query.set("cursor", cursor);
    const text = query.toString();
    return `/dashboard/deliveries${text ? `?${text}` : ""}`;
  };
  return (
    <>
      <h1>Deliveries</h1>
      <p class="lead">Every event sent to your endpoints, newest first, kept for your retention window.</p>
      <search aria-label="Filter deliveries">
        <form method="get" action="/dashboard/deliveries" class="panel row">
          <div>
            <label for="filter-endpoint">Endpoint</label>
            <select id="filter-endpoint" name="endpoint_id">
              <option value="" selected={!props.filter.endpoint_id}>
                All endpoints
              </option>
              {props.endpoints.map((e) => (
                <option value={e.id} selected={props.filter.endpoint_id === e.id} safe>
                  {e.url}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="filter-status">Status</label>
            <select id="filter-status" name="status">
              <option value="" selected={!props.filter.status}>
                Any
              </option>
              <option value="pending" selected={props.filter.status === "pending"}>
                In progress
              </option>
              <option value="succeeded" selected={props.filter.status === "succeeded"}>
                Succeeded
              </option>
              <option value="parked" selected={props.filter.status === "parked"}>
                Parked
              </option>
            </select>
          </div>
          <div>
            <label for="filter-field">Field</label>
            <select id="filter-field" name="field">
              <option value="" selected={!props.filter.field}>
                Any
              </option>
              {EVENT_FIELDS.map((f) => (
                <option value={f} selected={props.filter.field === f}>
                  {f}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="filter-number">Number</label>
            <select id="filter-number" name="number">
              <option value="" selected={!props.filter.number}>
                All numbers
              </option>
              {props.numbers.map((n) => (
                <option value={n} selected={props.filter.number === n} safe>
                  {n}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="filter-message">Message id</label>
            <input
              id="filter-message"
              name="message_id"
              class="mono"
              maxlength="300"
              placeholder="wamid.…"
              value={props.filter.message_id ?? ""}
            />
          </div>
          <div>
            <label for="filter-last">Last answer (HTTP code)</label>
            <input
              id="filter-last"
              name="last_status"
              inputmode="numeric"
              pattern="[1-5][0-9][0-9]"
              maxlength="3"
              placeholder="e.g. 500"
              value={props.filter.last_status ?? ""}
            />
          </div>
          <div>
            <label for="filter-dfrom">From (UTC)</label>
            <input id="filter-dfrom" name="from" type="datetime-local" value={props.filter.from ?? ""} />
          </div>
          <div>
            <label for="filter-dto">To (UTC)</label>
            <input id="filter-dto" name="to" type="datetime-local" value={props.filter.to ?? ""} />
          </div>
          <div class="filter-submit">
            <button type="submit">Filter</button>
          </div>
        </form>
      </search>
      {props.deliveries.length === 0 ? (
        <p class="panel">
          No deliveries
          {Object.entries(props.filter).some(([name, v]) => v && name !== "cursor") ? " match this filter" : " yet"}.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="cards">
            <caption class="visually-hidden">Deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Delivery</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {props.deliveries.map((d) => (
                <tr>
                  <td data-label="Created">
                    <Time at={d.created_at} now={props.now} />
                  </td>
                  <td data-label="Delivery" class="break">
                    <a href={deliveryPath(d.id)} class="mono" safe>
                      {d.id}
                    </a>
                    {d.is_test ? (
                      <>
                        {" "}
                        <Badge tone="plain" text="test" />
                      </>
                    ) : (
                      ""
                    )}
                    {d.replay_of ? (
                      <div class="small">
                        replay of{" "}
                        <a href={deliveryPath(d.replay_of)} class="mono" safe>
                          {d.replay_of}
                        </a>
                      </div>
                    ) : (
                      ""
                    )}
                  </td>
                  <td data-label="Event" class="small" safe>
                    {d.about}
                  </td>
                  <td data-label="Endpoint" class="break small" safe>
                    {urlOf(d.endpoint_id)}
                  </td>
                  <td data-label="Status">
                    <DeliveryStatus delivery={d} />
                  </td>
                  <td data-label="Attempts" class="num">
                    {d.attempt_count}
                  </td>
                  <td data-label="Next attempt">
                    {d.next_attempt_at ? (
                      <Time at={d.next_attempt_at} now={props.now} />
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager firstPage={props.firstPage} nextCursor={props.nextCursor} link={pageLink} />
    </>
  );
}

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
    <div class="table-wrap">
      <table class="cards">
        <caption class="visually-hidden">Attempts</caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              #
            </th>
            <th scope="col">Time</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="num">
              Duration
            </th>
            <th scope="col">Response (first 1 KB)</th>
          </tr>
        </thead>
        <tbody>
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
        </tbody>
      </table>
    </div>
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
