import { escapeHtml } from "@kitajs/html";
import type { requestView } from "../../requests/queries.ts";
import { Badge, Pager, Time, TimeRangeAndFilter, type Tone } from "../../html/components.tsx";
import { CardsTable, FilterSelect, isFiltered, NumberFilter, pageLinks } from "../../html/list.tsx";

export type RequestRow = ReturnType<typeof requestView>;

export interface RequestsFilter {
  number?: string;
  status?: string;
  error_code?: string;
  api_key_id?: string;
  from?: string;
  to?: string;
}

const requestPath = (id: string) => `/dashboard/requests/${encodeURIComponent(id)}`;

function statusTone(status: number): Tone {
  return status < 300 ? "ok" : status < 500 && status !== 429 ? "bad" : "warn";
}

/** Who answered, in a few words: our error (with its code), or upstream's status and error code. */
function outcome(r: RequestRow): string {
  if (r.error_code !== null) return `Switchboard ${r.status} (${r.error_code})`;
  return `Upstream ${r.upstream_status}${r.upstream_error_code !== null ? ` (${r.upstream_error_code}${r.upstream_error_subcode !== null ? `/${r.upstream_error_subcode}` : ""})` : ""}`;
}

const keyName = (r: RequestRow) => r.api_key_name ?? (r.api_key_prefix ? `${r.api_key_prefix}…` : r.api_key_id);

export function RequestsPage(props: {
  requests: RequestRow[];
  keys: { id: string; label: string }[];
  numbers: string[];
  filter: RequestsFilter;
  nextCursor: string | null;
  firstPage: boolean;
  now: number;
  notFound?: string;
  messageNotFound?: string;
}) {
  const f = props.filter;
  return (
    <>
      <h1>Requests</h1>
      <p class="lead">
        Every call your keys made through the proxy, newest first, kept for your retention window. Paste a request id (
        <span class="mono">X-Proxy-Request-Id</span>, or <span class="mono">trace_id</span> of an error) to see one
        call.
      </p>
      <search aria-label="Find a request by id">
        <form method="get" action="/dashboard/requests/lookup" class="panel row">
          <div class="grow">
            <label for="lookup-id">Request id</label>
            <input id="lookup-id" name="id" type="search" class="mono" placeholder="req_…" maxlength="200" required />
          </div>
          <div class="filter-submit">
            <button type="submit">Find</button>
          </div>
        </form>
      </search>
      {props.notFound ? (
        <p class="panel error-text" role="alert">
          No call{" "}
          <span class="mono" safe>
            {props.notFound}
          </span>{" "}
          in your log: check the id, or it may be past your retention window.
        </p>
      ) : (
        ""
      )}
      <search aria-label="Find a message's timeline">
        <form method="get" action="/dashboard/messages/lookup" class="panel row">
          <div class="grow">
            <label for="lookup-message">Message id</label>
            <input
              id="lookup-message"
              name="id"
              type="search"
              class="mono"
              placeholder="wamid.…"
              maxlength="300"
              required
            />
          </div>
          <div class="filter-submit">
            <button type="submit">Show timeline</button>
          </div>
        </form>
      </search>
      {props.messageNotFound ? (
        <p class="panel error-text" role="alert">
          No call or webhook event of yours mentions{" "}
          <span class="mono" safe>
            {props.messageNotFound}
          </span>{" "}
          (it may be past your retention window).
        </p>
      ) : (
        ""
      )}
      <search aria-label="Filter requests">
        <form method="get" action="/dashboard/requests" class="panel row">
          <NumberFilter value={f.number} numbers={props.numbers} />
          <FilterSelect
            id="filter-status"
            name="status"
            label="Status"
            any="Any"
            value={f.status}
            options={["2xx", "4xx", "5xx"]}
          />
          <div>
            <label for="filter-code">Error code</label>
            <input
              id="filter-code"
              name="error_code"
              inputmode="numeric"
              pattern="[0-9]*"
              maxlength="10"
              value={f.error_code ?? ""}
              placeholder="e.g. 1006 or 131047"
            />
          </div>
          <FilterSelect
            id="filter-key"
            name="api_key_id"
            label="API key"
            any="All keys"
            value={f.api_key_id}
            options={props.keys.map((k) => ({ value: k.id, text: k.label }))}
          />
          <TimeRangeAndFilter from={f.from} to={f.to} />
        </form>
      </search>
      {props.requests.length === 0 ? (
        <p class="panel">
          {isFiltered(f) ? (
            <>
              No calls match this filter. <a href="/dashboard/requests">Show them all</a>.
            </>
          ) : (
            <>
              No calls yet: send one through the proxy with a key from <a href="/dashboard/api-keys">API keys</a>, and
              each call is listed here with its answer.
            </>
          )}
        </p>
      ) : (
        <CardsTable
          caption="Requests"
          columns={["Time", "Call", "Number or WABA", "Outcome", "Key", { text: "Upstream", num: true }]}
        >
          {props.requests.map((r) => (
            <tr>
              <td data-label="Time">
                <Time at={r.at} now={props.now} />
              </td>
              <td data-label="Call" class="break">
                <a href={requestPath(r.id)} class="mono" safe>
                  {r.id}
                </a>
                <div class="small" safe>
                  {r.route ?? r.method}
                </div>
              </td>
              <td data-label="Number or WABA" class="mono small" safe>
                {r.phone_number_id ?? r.waba_id ?? ""}
              </td>
              <td data-label="Outcome">
                <Badge tone={statusTone(r.status)} text={outcome(r)} />
              </td>
              <td data-label="Key" class="small" safe>
                {keyName(r)}
              </td>
              <td data-label="Upstream" class="num small">
                {r.upstream_ms === null ? <span class="muted">not asked</span> : escapeHtml(`${r.upstream_ms} ms`)}
              </td>
            </tr>
          ))}
        </CardsTable>
      )}
      <Pager firstPage={props.firstPage} nextCursor={props.nextCursor} link={pageLinks("/dashboard/requests", f)} />
    </>
  );
}

/** One call: every field, and what its error means and what to do. */
export function RequestPage(props: { request: RequestRow; now: number }) {
  const r = props.request;
  const row = (label: string, value: string | number | null, mono = false) => (
    <>
      <dt>{escapeHtml(label)}</dt>
      <dd class={mono ? "mono break" : undefined}>
        {value === null ? <span class="muted">none</span> : escapeHtml(String(value))}
      </dd>
    </>
  );
  return (
    <>
      <p>
        <a href="/dashboard/requests">← All requests</a>
      </p>
      <h1>
        Request{" "}
        <span class="mono" safe>
          {r.id}
        </span>
      </h1>
      <section class="panel" aria-labelledby="outcome-heading">
        <h2 id="outcome-heading">
          <Badge tone={statusTone(r.status)} text={outcome(r)} />
        </h2>
        {r.explanation ? (
          <p data-explanation safe>
            {r.explanation}
          </p>
        ) : r.status >= 400 ? (
          <p class="muted">The platform's answer went back to the caller unchanged; its message says more.</p>
        ) : (
          ""
        )}
      </section>
      <dl class="panel facts">
        <dt>Time</dt>
        <dd>
          <Time at={r.at} now={props.now} />
        </dd>
        {row("Call", r.route ?? r.method)}
        {row("Number", r.phone_number_id, true)}
        {row("WABA", r.waba_id, true)}
        {row("API key", keyName(r))}
        {row("Status returned", r.status)}
        {row("Our error code", r.error_code)}
        {row("Upstream status", r.upstream_status)}
        {row("Upstream error code", r.upstream_error_code)}
        {row("Upstream error subcode", r.upstream_error_subcode)}
        {row("Upstream latency (ms)", r.upstream_ms)}
        {row("Request bytes", r.request_bytes)}
        {row("Response bytes", r.response_bytes)}
        <dt>Message id</dt>
        <dd class="mono break">
          {r.message_id === null ? (
            <span class="muted">none</span>
          ) : (
            <a href={`/dashboard/messages/${encodeURIComponent(r.message_id)}`} safe>
              {r.message_id}
            </a>
          )}
        </dd>
      </dl>
    </>
  );
}
