import { escapeHtml } from "@kitajs/html";
import { FieldError } from "../../html/components.tsx";
import type { FormState } from "../../html/form-fields.tsx";
import type { Account } from "../../store/types.ts";

export { ErrorSummary, Field, Fields, type FieldSpec, type FormState } from "../../html/form-fields.tsx";

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
