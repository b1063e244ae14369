import { Badge, Pager, Time, TimeRangeAndFilter } from "../../html/components.tsx";
import { CardsTable, FilterSelect, isFiltered, NumberFilter, pageLinks } from "../../html/list.tsx";
import { EVENT_FIELDS } from "../../webhooks/fields.ts";
import type { DeliveryShape, EndpointShape } from "../../html/webhook-shapes.ts";
import { DeliveryStatus, deliveryPath } from "./delivery-status.tsx";

/** The status filter's choices, in the words of the status badge. */
const STATUSES = [
  { value: "pending", text: "In progress" },
  { value: "succeeded", text: "Succeeded" },
  { value: "parked", text: "Parked" },
];

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
  const f = props.filter;
  const urlOf = (id: string) => props.endpoints.find((e) => e.id === id)?.url ?? id;
  return (
    <>
      <h1>Deliveries</h1>
      <p class="lead">Every event sent to your endpoints, newest first, kept for your retention window.</p>
      <search aria-label="Filter deliveries">
        <form method="get" action="/dashboard/deliveries" class="panel row">
          <FilterSelect
            id="filter-endpoint"
            name="endpoint_id"
            label="Endpoint"
            any="All endpoints"
            value={f.endpoint_id}
            options={props.endpoints.map((e) => ({ value: e.id, text: e.url }))}
          />
          <FilterSelect id="filter-status" name="status" label="Status" any="Any" value={f.status} options={STATUSES} />
          <FilterSelect id="filter-field" name="field" label="Field" any="Any" value={f.field} options={EVENT_FIELDS} />
          <NumberFilter value={f.number} numbers={props.numbers} />
          <div>
            <label for="filter-message">Message id</label>
            <input
              id="filter-message"
              name="message_id"
              class="mono"
              maxlength="300"
              placeholder="wamid.…"
              value={f.message_id ?? ""}
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
              value={f.last_status ?? ""}
            />
          </div>
          <TimeRangeAndFilter from={f.from} to={f.to} ids={{ from: "filter-dfrom", to: "filter-dto" }} />
        </form>
      </search>
      {props.deliveries.length === 0 ? (
        <p class="panel">
          {isFiltered(f) ? (
            <>
              No deliveries match this filter. <a href="/dashboard/deliveries">Show them all</a>.
            </>
          ) : (
            <>
              No deliveries yet: each event the platform sends for your numbers is delivered to the{" "}
              <a href="/dashboard/endpoints">endpoints</a> that take its fields, and listed here. An endpoint's Send
              test makes one.
            </>
          )}
        </p>
      ) : (
        <CardsTable
          caption="Deliveries"
          columns={[
            "Created",
            "Delivery",
            "Event",
            "Endpoint",
            "Status",
            { text: "Attempts", num: true },
            "Next attempt",
          ]}
        >
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
                {d.next_attempt_at ? <Time at={d.next_attempt_at} now={props.now} /> : <span class="muted">none</span>}
              </td>
            </tr>
          ))}
        </CardsTable>
      )}
      <Pager firstPage={props.firstPage} nextCursor={props.nextCursor} link={pageLinks("/dashboard/deliveries", f)} />
    </>
  );
}
