import { escapeHtml } from "@kitajs/html";
import { ActionButton, CodeList, Notice, SecretOnce, Time } from "../../html/components.tsx";
import { DeliveryChart } from "../../html/chart.tsx";
import { formatTime } from "../../html/format.ts";
import { EVENT_FIELDS } from "../../webhooks/fields.ts";
import type { EndpointShape, HourBucket } from "../../html/webhook-shapes.ts";
import { disabledText, EndpointState } from "../../html/endpoint-state.tsx";
import { endpointPath, type NumberChoice, numberLabel } from "./endpoints.tsx";
import { RecoverSection, type RecoveryShape } from "./recover.tsx";
import { ReceiverGuide } from "./receiver-guide.tsx";

/** A secret that was just created or rotated, with the overlap's end after a rotation. */
export interface ShownSecret {
  secret: string;
  rotated: boolean;
}

/** The signing secret, shown once after a create or a rotation, with what to do with it. */
function NewSecret({ endpoint: e, secret }: { endpoint: EndpointShape; secret: ShownSecret }) {
  return (
    <SecretOnce
      id="signing-secret"
      label={secret.rotated ? "New signing secret" : "Signing secret"}
      value={secret.secret}
    >
      {secret.rotated && e.previous_secret_expires_at ? (
        <>
          Copy it now: it is shown only this once. Until{" "}
          {escapeHtml(formatTime(Date.parse(e.previous_secret_expires_at)))} every delivery is signed with both the new
          and the old secret, so update your receiver before then.
        </>
      ) : e.signature === "platform" ? (
        "Copy it now: it is shown only this once. Use this as your bot's app secret: it checks X-Hub-Signature-256 with it, unchanged."
      ) : (
        "Copy it now: it is shown only this once. Your receiver verifies webhook-signature with it."
      )}
    </SecretOnce>
  );
}

function DisabledNotice({ endpoint: e }: { endpoint: EndpointShape }) {
  return (
    <Notice tone="bad">
      <p safe>{disabledText(e.disabled_reason)}</p>
      <p>
        While disabled, the endpoint receives nothing and deliveries that come due are parked; replay them after
        enabling.
      </p>
    </Notice>
  );
}

function EndpointFacts(props: { endpoint: EndpointShape; numbers: NumberChoice[]; now: number }) {
  const { endpoint: e } = props;
  return (
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
        <dt>Signature</dt>
        <dd>
          {e.signature === "platform"
            ? "Platform: X-Hub-Signature-256 (the signing secret is the bot's app secret), one change per delivery, and the Standard Webhooks headers"
            : "Standard Webhooks"}
        </dd>
        <dt>Verify token</dt>
        <dd>{e.verify_token_set ? "set" : "not set"}</dd>
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
  );
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
  const base = endpointPath(e.id);
  // Send test offers every field; it starts on one the endpoint takes.
  const testField = e.fields.includes("messages") ? "messages" : (e.fields[0] ?? "messages");
  return (
    <>
      <p class="small">
        <a href="/dashboard/endpoints">← Endpoints</a>
      </p>
      <h1 class="break" safe>
        {e.url}
      </h1>
      {flash}
      {props.secret ? <NewSecret endpoint={e} secret={props.secret} /> : ""}
      {e.enabled ? "" : <DisabledNotice endpoint={e} />}

      <EndpointFacts endpoint={e} numbers={props.numbers} now={props.now} />

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
            class="row"
          >
            <label for="test-field" class="visually-hidden">
              Test event field
            </label>
            <select id="test-field" name="field" title="The field of the test event's one change">
              {EVENT_FIELDS.map((name) => (
                <option value={name} selected={name === testField}>
                  {name}
                </option>
              ))}
            </select>
            <button type="submit">Send test</button>
          </form>
          <form
            method="post"
            action={`${base}/verify`}
            hx-post={`${base}/verify`}
            hx-target="#test-result"
            hx-swap="innerHTML"
          >
            <button type="submit" class="secondary">
              Verify
            </button>
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
