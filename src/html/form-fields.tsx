import { escapeHtml } from "@kitajs/html";
import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { FieldError, Notice } from "./components.tsx";

/**
 * The inputs of the server-rendered forms (the console's, the dashboard's password form): each
 * carries its schema's rules as HTML attributes, and a refused form says at the top what to fix.
 */

/** What a form shows again after a refused post: the values sent (never a password) and each field's error. */
export interface FormState {
  values: Record<string, unknown>;
  errors: Record<string, string>;
  message?: string;
}

/** One input of a form: its name, its label, and the schema property it is read against. */
export interface FieldSpec {
  id: string;
  name: string;
  label: string;
  hint?: string;
  /** How it is typed; an email format makes it `email` whatever this says. */
  type?: "text" | "password";
  /** What the browser may fill in: a new password by default for a password, nothing for text. */
  autocomplete?: "current-password";
  rule: TSchema;
}

/**
 * The schema's rules as the input's own attributes (required, minlength, maxlength, pattern, type
 * email), so the browser asks for what the server will check, in the same terms.
 */
export function inputRules(spec: Pick<FieldSpec, "rule" | "type">) {
  const rule = spec.rule as TSchema & { minLength?: number; maxLength?: number; pattern?: string; format?: string };
  return {
    type: rule.format === "email" ? "email" : (spec.type ?? "text"),
    required: rule[OptionalKind] !== "Optional",
    minlength: rule.minLength === undefined ? undefined : String(rule.minLength),
    maxlength: rule.maxLength === undefined ? undefined : String(rule.maxLength),
    pattern: rule.pattern,
  };
}

/** A labelled input with its hint and error, wired for screen readers; `focus`: the first field to fix. */
export function Field(props: FieldSpec & { form?: FormState; focus?: boolean }) {
  const error = props.form?.errors[props.name];
  const raw = props.type === "password" ? undefined : props.form?.values[props.name];
  const hintId = `${props.id}-hint`;
  const errorId = `${props.id}-error`;
  const described = [props.hint ? hintId : "", error ? errorId : ""].filter(Boolean).join(" ");
  return (
    <div>
      <label for={props.id}>
        {escapeHtml(props.label)}
        {props.hint ? (
          <span class="hint" id={hintId}>
            {escapeHtml(props.hint)}
          </span>
        ) : (
          ""
        )}
      </label>
      <input
        {...inputRules(props)}
        id={props.id}
        name={props.name}
        value={typeof raw === "string" ? raw : undefined}
        autocomplete={props.autocomplete ?? (props.type === "password" ? "new-password" : "off")}
        spellcheck="false"
        autofocus={props.focus}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={described || undefined}
      />
      <FieldError id={errorId} message={error} />
    </div>
  );
}

/** A form's fields, each from its spec; the first one with an error takes the focus. */
export function Fields(props: { fields: readonly FieldSpec[]; form?: FormState }) {
  const first = firstBad(props.fields, props.form);
  return (
    <>
      {props.fields.map((f) => (
        <Field {...f} form={props.form} focus={f === first} />
      ))}
    </>
  );
}

/** The first field of `fields` with an error: the one a refused form focuses. */
export const firstBad = (fields: readonly FieldSpec[], form?: FormState) => fields.find((f) => form?.errors[f.name]);

/**
 * What a refused form says at the top of the page: why it was refused, and each field to fix (a
 * link to it) with its rule, so that nothing is below the fold. Nothing when the form was fine.
 */
export function ErrorSummary(props: { form?: FormState; fields: readonly FieldSpec[]; what: string }) {
  const { form } = props;
  const bad = props.fields.filter((f) => form?.errors[f.name]);
  if (!form || (bad.length === 0 && !form.message)) return "";
  return (
    <Notice tone="bad" id="error-summary">
      <p>
        <strong>{escapeHtml(`${props.what} was not saved.`)}</strong>{" "}
        {form.message ? (
          <span safe>{form.message}</span>
        ) : (
          escapeHtml(bad.length === 1 ? "Fix this field:" : `Fix these ${bad.length} fields:`)
        )}
      </p>
      {bad.length > 0 ? (
        <ul>
          {bad.map((f) => (
            <li>
              <a href={`#${f.id}`}>{escapeHtml(f.label)}</a>: <span safe>{form.errors[f.name]}</span>
            </li>
          ))}
        </ul>
      ) : (
        ""
      )}
    </Notice>
  );
}
