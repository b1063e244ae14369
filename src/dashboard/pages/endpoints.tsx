import { Badge } from "../components.tsx";
import { DeliveryChart } from "../chart.tsx";
import { CardsTable } from "../list.tsx";
import type { EndpointShape, HourBucket } from "../webhook-shapes.ts";

export interface NumberChoice {
  phone_number_id: string;
  label: string;
}

export const endpointPath = (id: string) => `/dashboard/endpoints/${encodeURIComponent(id)}`;

/** Why an endpoint is disabled and what to do, in words. */
export function disabledText(reason: EndpointShape["disabled_reason"]): string {
  if (reason === "gone") return "Disabled: the receiver answered 410 Gone. Fix the receiver, then choose Enable.";
  if (reason === "consecutive_failures")
    return "Disabled after 50 failed attempts in a row with no success for 24 hours. Fix the receiver, then choose Enable.";
  return "Disabled.";
}

export function EndpointState(props: { endpoint: EndpointShape }) {
  const e = props.endpoint;
  if (!e.enabled)
    return (
      <Badge
        tone="bad"
        text={
          e.disabled_reason === "gone"
            ? "Disabled (410 Gone)"
            : e.disabled_reason === "consecutive_failures"
              ? "Disabled (failing)"
              : "Disabled"
        }
      />
    );
  if (e.consecutive_failures >= 20) return <Badge tone="warn" text="Enabled, failing" />;
  return <Badge tone="ok" text="Enabled" />;
}

export function numberLabel(endpoint: EndpointShape, numbers: NumberChoice[]): string {
  if (endpoint.phone_number_id === null) return "All numbers";
  return numbers.find((n) => n.phone_number_id === endpoint.phone_number_id)?.label ?? endpoint.phone_number_id;
}

export function EndpointsPage(props: {
  endpoints: { endpoint: EndpointShape; hours: HourBucket[] }[];
  numbers: NumberChoice[];
  now: number;
  flash?: JSX.Element;
}) {
  const { flash = "" } = props;
  return (
    <>
      <div class="row spread">
        <h1>Endpoints</h1>
        <a class="button" href="/dashboard/endpoints/new">
          Add endpoint
        </a>
      </div>
      <p class="lead">The HTTPS addresses your events are delivered to, signed under Standard Webhooks.</p>
      {flash}
      {props.endpoints.length === 0 ? (
        <p class="panel">
          No endpoints yet. <a href="/dashboard/endpoints/new">Add one</a> to start receiving events.
        </p>
      ) : (
        <CardsTable
          caption="Webhook endpoints"
          columns={["URL", "State", { text: "Failures in a row", num: true }, "Events", "Last 24 hours"]}
        >
          {props.endpoints.map(({ endpoint: e, hours }) => (
            <tr>
              <td data-label="URL" class="break">
                <a href={endpointPath(e.id)} safe>
                  {e.url}
                </a>
                <div class="small muted" safe>
                  {numberLabel(e, props.numbers)}
                </div>
              </td>
              <td data-label="State">
                <EndpointState endpoint={e} />
                {e.enabled ? (
                  ""
                ) : (
                  <p class="small" safe>
                    {disabledText(e.disabled_reason)}
                  </p>
                )}
              </td>
              <td data-label="Failures" class="num">
                {e.consecutive_failures}
              </td>
              <td data-label="Events" class="small">
                {e.fields.length === 1 ? <code safe>{e.fields[0]}</code> : <>{e.fields.length} fields</>}
              </td>
              <td data-label="Last 24 hours">
                <DeliveryChart hours={hours} label={e.url} />
              </td>
            </tr>
          ))}
        </CardsTable>
      )}
    </>
  );
}
