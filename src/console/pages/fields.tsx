import { escapeHtml } from "@kitajs/html";
import { FieldError } from "../../dashboard/components.tsx";
import type { Account } from "../../store/types.ts";

/** What a form shows again after a refused post: the values sent (never a password) and each field's error. */
export interface FormState {
  values: Record<string, unknown>;
  errors: Record<string, string>;
  message?: string;
}

/** A labelled input with its hint and error, wired for screen readers. */
export function Field(props: {
  id: string;
  name: string;
  label: string;
  hint?: string;
  type?: "text" | "email" | "password";
  maxlength: number;
  form?: FormState;
  required?: boolean;
}) {
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
        type={props.type ?? "text"}
        id={props.id}
        name={props.name}
        required={props.required !== false}
        maxlength={String(props.maxlength)}
        value={typeof raw === "string" ? raw : undefined}
        autocomplete={props.type === "password" ? "new-password" : "off"}
        spellcheck="false"
        aria-invalid={error ? "true" : undefined}
        aria-describedby={described || undefined}
      />
      <FieldError id={errorId} message={error} />
    </div>
  );
}

/** A select of fixed choices, the current one chosen: the one sent again after a refused post, else `value`. */
export function Choice(props: {
  id: string;
  name: string;
  label: string;
  options: readonly { value: string; text: string }[];
  value: string | undefined;
  form?: FormState;
}) {
  const sent = props.form?.values[props.name];
  const value = typeof sent === "string" ? sent : props.value;
  const error = props.form?.errors[props.name];
  return (
    <div>
      <label for={props.id}>{escapeHtml(props.label)}</label>
      <select id={props.id} name={props.name} aria-invalid={error ? "true" : undefined}>
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === value}>
            {escapeHtml(o.text)}
          </option>
        ))}
      </select>
      <FieldError id={`${props.id}-error`} message={error} />
    </div>
  );
}

/** The filter forms' account select: every account, or one. */
export function AccountChoice(props: { id: string; accounts: readonly Account[]; value: string | undefined }) {
  return (
    <Choice
      id={props.id}
      name="account_id"
      label="Account"
      options={[{ value: "", text: "Every account" }, ...props.accounts.map((a) => ({ value: a.id, text: a.name }))]}
      value={props.value ?? ""}
    />
  );
}

/** The button that ends a row of fields (a filter, a setting): beside them, not the page's main action. */
export function SubmitBeside(props: { text: string }) {
  return (
    <div class="filter-submit">
      <button type="submit" class="secondary">
        {escapeHtml(props.text)}
      </button>
    </div>
  );
}
