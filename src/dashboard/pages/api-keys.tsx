import type { ApiKey } from "../../store/types.ts";
import { FieldError, SecretOnce } from "../../html/components.tsx";
import { KeysTable } from "../../html/keys-table.tsx";

export interface ApiKeysPageProps {
  keys: ApiKey[];
  now: number;
  created?: { key: string; record: ApiKey };
  flash?: JSX.Element;
  errors?: Record<string, string>;
}

export function ApiKeysPage(props: ApiKeysPageProps) {
  const { flash = "" } = props;
  return (
    <>
      <h1>API keys</h1>
      <p class="lead">
        Keys authenticate calls to the proxy (<code>Authorization: Bearer px_…</code>). Only a short prefix is kept on
        view.
      </p>
      {flash}
      {props.created ? (
        <SecretOnce
          id="new-key"
          label={`New ${props.created.record.mode} key${props.created.record.name ? `: ${props.created.record.name}` : ""}`}
          value={props.created.key}
        >
          Copy it now: it is shown only this once. If you lose it, revoke it and create another.
        </SecretOnce>
      ) : (
        ""
      )}
      <KeysTable
        keys={props.keys}
        now={props.now}
        revokeAction={(k) => `/dashboard/api-keys/${encodeURIComponent(k.id)}/revoke`}
      />
      <section class="panel" aria-labelledby="create-heading">
        <h2 id="create-heading">Create a key</h2>
        <form method="post" action="/dashboard/api-keys" class="stack">
          <fieldset>
            <legend>Mode</legend>
            <label class="choice">
              <input type="radio" name="mode" value="live" checked />
              <span>
                <strong>Live</strong> <span class="hint">works on every number of the account</span>
              </span>
            </label>
            <label class="choice">
              <input type="radio" name="mode" value="test" />
              <span>
                <strong>Test</strong> <span class="hint">works only on sandbox numbers</span>
              </span>
            </label>
            <FieldError id="mode-error" message={props.errors?.mode} />
          </fieldset>
          <div>
            <label for="key-name">
              Name{" "}
              <span class="hint" id="key-name-hint">
                Optional: where the key is used, e.g. "billing server".
              </span>
            </label>
            <input type="text" id="key-name" name="name" maxlength="100" aria-describedby="key-name-hint" />
            <FieldError id="name-error" message={props.errors?.name} />
          </div>
          <div>
            <button type="submit">Create key</button>
          </div>
        </form>
      </section>
    </>
  );
}
