import { escapeHtml } from "@kitajs/html";
import { ActionButton, Badge, CodeList, FieldError, Notice, SecretOnce, Time } from "../components.tsx";
import { CardsTable } from "../list.tsx";
import { DeliveryChart } from "../chart.tsx";
import { FIELD_GUIDE } from "../field-guide.ts";
import { formatTime } from "../format.ts";
import type { EndpointShape, HourBucket } from "../webhook-shapes.ts";
import { RecoverSection, type RecoveryShape } from "./recover.tsx";
import { ReceiverGuide } from "./receiver-guide.tsx";

export interface NumberChoice {
  phone_number_id: string;
  label: string;
}

const path = (id: string) => `/dashboard/endpoints/${encodeURIComponent(id)}`;

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

function numberLabel(endpoint: EndpointShape, numbers: NumberChoice[]): string {
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
                <a href={path(e.id)} safe>
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

export interface EndpointFormValues {
  url: string;
  fields: string[];
  phone_number_id: string | null;
}

/** Add or edit: the URL, a checklist of the 14 fields with what each carries, and one number or all. */
export function EndpointForm(props: {
  action: string;
  submit: string;
  values: EndpointFormValues;
  numbers: NumberChoice[];
  fieldNames: readonly string[];
  errors?: Record<string, string>;
  message?: string;
}) {
  const errors = props.errors ?? {};
  return (
    <form method="post" action={props.action} class="stack">
      {props.message ? (
        <Notice tone="bad">
          <p safe>{props.message}</p>
        </Notice>
      ) : (
        ""
      )}
      <div>
        <label for="url">
          URL
          <span class="hint" id="url-hint">
            https, publicly reachable, at most 2048 characters, no user name or password in it.
          </span>
        </label>
        <input
          type="url"
          id="url"
          name="url"
          required
          maxlength="2048"
          value={props.values.url}
          placeholder="https://example.com/webhooks/switchboard"
          autocomplete="url"
          spellcheck="false"
          aria-invalid={errors.url ? "true" : undefined}
          aria-describedby={errors.url ? "url-hint url-error" : "url-hint"}
        />
        <FieldError id="url-error" message={errors.url} />
      </div>
      <fieldset aria-describedby={errors.fields ? "fields-hint fields-error" : "fields-hint"}>
        <legend>Events</legend>
        <p class="hint" id="fields-hint">
          Choose at least one. A batched event may also carry changes of fields you did not choose, so check{" "}
          <code>changes[].field</code>.
        </p>
        <div class="checklist">
          {props.fieldNames.map((name) => {
            const guide = FIELD_GUIDE[name];
            return (
              <label class="choice">
                <input type="checkbox" name="fields" value={name} checked={props.values.fields.includes(name)} />
                <span>
                  <code safe>{name}</code>
                  {guide?.coexistenceOnly ? <span class="badge plain">coexistence</span> : ""}
                  <span class="hint" safe>
                    {guide?.carries ?? ""}
                  </span>
                </span>
              </label>
            );
          })}
        </div>
        <FieldError id="fields-error" message={errors.fields} />
      </fieldset>
      <div>
        <label for="phone_number_id">
          Number
          <span class="hint" id="number-hint">
            Only changes for this number are delivered (value.metadata.phone_number_id).
          </span>
        </label>
        <select id="phone_number_id" name="phone_number_id" aria-describedby="number-hint">
          <option value="" selected={props.values.phone_number_id === null}>
            All numbers
          </option>
          {props.numbers.map((n) => (
            <option value={n.phone_number_id} selected={props.values.phone_number_id === n.phone_number_id} safe>
              {n.label}
            </option>
          ))}
        </select>
        <FieldError id="phone_number_id-error" message={errors.phone_number_id} />
      </div>
      <div class="row">
        <button type="submit">{escapeHtml(props.submit)}</button>
        <a class="button secondary" href="/dashboard/endpoints">
          Cancel
        </a>
      </div>
    </form>
  );
}

export function NewEndpointPage(props: Parameters<typeof EndpointForm>[0] & { noNumbers: boolean }) {
  return (
    <>
      <h1>Add endpoint</h1>
      {props.noNumbers ? (
        <Notice tone="warn">
          <p>
            Connect a live number first: an endpoint needs at least one connected number that is not a sandbox number.{" "}
            <a href="/dashboard/numbers">Go to Numbers</a>.
          </p>
        </Notice>
      ) : (
        ""
      )}
      <div class="panel">
        <EndpointForm {...props} />
      </div>
    </>
  );
}

export function EditEndpointPage(props: Parameters<typeof EndpointForm>[0]) {
  return (
    <>
      <h1>Edit endpoint</h1>
      <div class="panel">
        <EndpointForm {...props} />
      </div>
    </>
  );
}

/** A secret that was just created or rotated, with the overlap's end after a rotation. */
export interface ShownSecret {
  secret: string;
  rotated: boolean;
}

export function EndpointPage(props: {
  endpoint: EndpointShape;
  hours: HourBucket[];
  numbers: NumberChoice[];
  now: number;
  secret?: ShownSecret;
  flash?: JSX.Element;
  recovery: RecoveryShape | null;
}) {
  const { endpoint: e, flash = "" } = props;
  const base = path(e.id);
  return (
    <>
      <p class="small">
        <a href="/dashboard/endpoints">← Endpoints</a>
      </p>
      <h1 class="break" safe>
        {e.url}
      </h1>
      {flash}
      {props.secret ? (
        <SecretOnce
          id="signing-secret"
          label={props.secret.rotated ? "New signing secret" : "Signing secret"}
          value={props.secret.secret}
        >
          {props.secret.rotated && e.previous_secret_expires_at ? (
            <>
              Copy it now: it is shown only this once. Until{" "}
              {escapeHtml(formatTime(Date.parse(e.previous_secret_expires_at)))} every delivery is signed with both the
              new and the old secret, so update your receiver before then.
            </>
          ) : (
            "Copy it now: it is shown only this once. Your receiver verifies webhook-signature with it."
          )}
        </SecretOnce>
      ) : (
        ""
      )}
      {e.enabled ? (
        ""
      ) : (
        <Notice tone="bad">
          <p safe>{disabledText(e.disabled_reason)}</p>
          <p>
            While disabled, the endpoint receives nothing and deliveries that come due are parked; replay them after
            enabling.
          </p>
        </Notice>
      )}

      <section class="panel" aria-labelledby="state-heading">
        <h2 id="state-heading">State</h2>
        <dl class="facts">
          <dt>State</dt>
          <dd>
            <EndpointState endpoint={e} />
          </dd>
          <dt>Failures in a row</dt>
          <dd>
            {e.consecutive_failures}
            {e.consecutive_failures >= 20 && e.enabled
              ? " (you were warned by email; 50 with no success for 24 hours disables it)"
              : ""}
          </dd>
          <dt>Last success</dt>
          <dd>
            <Time at={e.last_success_at} now={props.now} />
          </dd>
          <dt>Number</dt>
          <dd safe>{numberLabel(e, props.numbers)}</dd>
          <dt>Events</dt>
          <dd>
            <CodeList items={e.fields} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={e.created_at} now={props.now} />
          </dd>
          {e.previous_secret_expires_at ? (
            <>
              <dt>Old secret</dt>
              <dd>
                also signs until <Time at={e.previous_secret_expires_at} now={props.now} />
              </dd>
            </>
          ) : (
            ""
          )}
        </dl>
      </section>

      <section class="panel" aria-labelledby="chart-heading">
        <h2 id="chart-heading">Last 24 hours</h2>
        <DeliveryChart hours={props.hours} size="large" label="Deliveries" />
        <p class="small">
          <a href={`/dashboard/deliveries?endpoint_id=${encodeURIComponent(e.id)}`}>See this endpoint's deliveries</a>
        </p>
      </section>

      <section class="panel" aria-labelledby="actions-heading">
        <h2 id="actions-heading">Actions</h2>
        <div class="row">
          <form
            method="post"
            action={`${base}/test`}
            hx-post={`${base}/test`}
            hx-target="#test-result"
            hx-swap="innerHTML"
          >
            <button type="submit">Send test</button>
          </form>
          {e.enabled ? "" : <ActionButton action={`${base}/enable`} label="Enable" tone="primary" />}
          <ActionButton
            action={`${base}/rotate-secret`}
            label="Rotate secret"
            confirm="Rotate the signing secret? The old one keeps signing beside the new one for 24 hours."
          />
          <a class="button secondary" href={`${base}/edit`}>
            Edit
          </a>
          <ActionButton
            action={`${base}/delete`}
            label="Delete"
            tone="danger"
            confirm="Delete this endpoint and its deliveries? This cannot be undone."
          />
        </div>
        <div id="test-result" class="result" aria-live="polite"></div>
      </section>

      <RecoverSection endpointId={e.id} recovery={props.recovery} now={props.now} />

      <ReceiverGuide />
    </>
  );
}
