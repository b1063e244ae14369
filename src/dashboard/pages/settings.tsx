import { changePasswordBody } from "../../account-api/password.ts";
import type { Retention } from "../../store/types.ts";
import { ErrorSummary, Fields, type FieldSpec, type FormState } from "../../html/form-fields.tsx";

/** The own-password form's fields, read against POST /api/password's rules. */
export const PASSWORD_FIELDS = [
  {
    id: "current-password",
    name: "current_password",
    label: "Current password",
    type: "password",
    autocomplete: "current-password",
    rule: changePasswordBody.properties.current_password,
  },
  {
    id: "new-password",
    name: "password",
    label: "New password",
    hint: "At least 10 characters. Your other sessions are signed out.",
    type: "password",
    rule: changePasswordBody.properties.password,
  },
] as const satisfies readonly FieldSpec[];

export function SettingsPage(props: { retention: Retention; flash?: JSX.Element; passwordForm?: FormState }) {
  const { flash = "" } = props;
  const option = (value: Retention, title: string, hint: string) => (
    <label class="choice">
      <input type="radio" name="retention" value={value} checked={props.retention === value} />
      <span>
        <strong safe>{title}</strong>{" "}
        <span class="hint" safe>
          {hint}
        </span>
      </span>
    </label>
  );
  return (
    <>
      <h1>Settings</h1>
      {flash}
      <ErrorSummary form={props.passwordForm} fields={PASSWORD_FIELDS} what="Your new password" />
      <section class="panel" aria-labelledby="retention-heading">
        <h2 id="retention-heading">Delivery retention</h2>
        <p class="small">
          How long webhook deliveries, their attempts and payloads are kept. A delivery can be replayed only while it is
          kept.
        </p>
        <form method="post" action="/dashboard/settings" class="stack">
          <fieldset>
            <legend>Keep deliveries for</legend>
            {option("24h", "24 hours", "less stored data")}
            {option("7d", "7 days", "more time to replay after an outage")}
          </fieldset>
          <div>
            <button type="submit">Save</button>
          </div>
        </form>
      </section>
      <section class="panel" aria-labelledby="password-heading">
        <h2 id="password-heading">Your password</h2>
        <form method="post" action="/dashboard/settings/password" class="stack">
          <Fields fields={PASSWORD_FIELDS} form={props.passwordForm} />
          <div>
            <button type="submit">Change password</button>
          </div>
        </form>
      </section>
    </>
  );
}
