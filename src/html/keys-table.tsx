import { escapeHtml } from "@kitajs/html";
import type { ApiKey } from "../store/types.ts";
import { ActionButton, Badge, Time } from "./components.tsx";
import { CardsTable } from "./list.tsx";

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
