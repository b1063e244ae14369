import { escapeHtml } from "@kitajs/html";
import { FieldError, Notice } from "../../html/components.tsx";
import { FIELD_GUIDE } from "../field-guide.ts";
import type { SignatureScheme } from "../../store/endpoints.ts";
import type { NumberChoice } from "./endpoints.tsx";

/** What each signature scheme means to the receiver's owner (docs/webhooks.md#signature-schemes). */
const SCHEMES: { value: SignatureScheme; label: string; hint: string }[] = [
  {
    value: "standard",
    label: "Standard Webhooks",
    hint: "webhook-id, webhook-timestamp and webhook-signature headers; replays of old captures are refused by the timestamp. The account's share of each event in one request.",
  },
  {
    value: "platform",
    label: "Platform (X-Hub-Signature-256)",
    hint: "For a bot written against the platform with a published library: one change per request, signed as the platform signs, so the bot's code is unchanged. Use the signing secret as the bot's app secret.",
  },
];

export interface EndpointFormValues {
  url: string;
  fields: string[];
  phone_number_id: string | null;
  signature: SignatureScheme;
  /** Empty: none (an edit leaves a token already set as it is). */
  verify_token: string;
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
      <fieldset>
        <legend>Signature</legend>
        {SCHEMES.map((s) => (
          <label class="choice">
            <input type="radio" name="signature" value={s.value} checked={props.values.signature === s.value} />
            <span>
              {escapeHtml(s.label)}
              <span class="hint" safe>
                {s.hint}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      <div>
        <label for="verify_token">
          Verify token
          <span class="hint" id="verify-token-hint">
            Optional: what Verify sends as hub.verify_token, the token your bot checks (its webhook verify token). Left
            empty on an edit, a token already set stays.
          </span>
        </label>
        <input
          type="text"
          id="verify_token"
          name="verify_token"
          maxlength="200"
          value={props.values.verify_token}
          autocomplete="off"
          spellcheck="false"
          aria-describedby="verify-token-hint"
        />
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
