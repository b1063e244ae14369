import { escapeHtml } from "@kitajs/html";
import type { ApiKey } from "../../store/types.ts";
import { ActionButton, Badge, FieldError, SecretOnce, Time } from "../components.tsx";
import { CardsTable } from "../list.tsx";

export interface ApiKeysPageProps {
  keys: ApiKey[];
  now: number;
  created?: { key: string; record: ApiKey };
  flash?: JSX.Element;
  errors?: Record<string, string>;
}

/** The keys with their state, and a Revoke button (a form posting to `revokeAction`) for each active one. */
export function KeysTable(props: {
  keys: ApiKey[];
  now: number;
  revokeAction: (key: ApiKey) => string;
  empty?: string;
}) {
  if (props.keys.length === 0)
    return <p class="panel">{escapeHtml(props.empty ?? "No API keys yet. Create one below.")}</p>;
  return (
    <CardsTable
      caption="API keys"
      columns={["Name", "Key", "Mode", "Created", "State", { text: "Actions", hidden: true }]}
    >
      {props.keys.map((k) => (
        <tr>
          <td data-label="Name">{k.name ? <span safe>{k.name}</span> : <span class="muted">unnamed</span>}</td>
          <td data-label="Key" class="mono">
            <span safe>{k.prefix}</span>…
          </td>
          <td data-label="Mode">{k.mode === "live" ? "Live" : "Test (sandbox numbers only)"}</td>
          <td data-label="Created">
            <Time at={k.createdAt} now={props.now} />
          </td>
          <td data-label="State">
            {k.revokedAt === null ? (
              <Badge tone="ok" text="Active" />
            ) : (
              <>
                <Badge tone="plain" text="Revoked" /> <Time at={k.revokedAt} now={props.now} relative={false} />
              </>
            )}
          </td>
          <td data-label="Actions">
            {k.revokedAt === null ? (
              <ActionButton
                action={props.revokeAction(k)}
                label="Revoke"
                tone="danger"
                name={`Revoke key ${k.name ?? k.prefix}`}
                confirm={`Revoke ${k.name ?? k.prefix}…? Calls with this key will fail with 401 at once.`}
              />
            ) : (
              ""
            )}
          </td>
        </tr>
      ))}
    </CardsTable>
  );
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
