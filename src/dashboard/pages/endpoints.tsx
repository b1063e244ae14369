import { DeliveryChart } from "../../html/chart.tsx";
import { CardsTable } from "../../html/list.tsx";
import { disabledText, EndpointState } from "../../html/endpoint-state.tsx";
import type { EndpointShape, HourBucket } from "../../html/webhook-shapes.ts";

export interface NumberChoice {
  phone_number_id: string;
  label: string;
}

export const endpointPath = (id: string) => `/dashboard/endpoints/${encodeURIComponent(id)}`;

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
