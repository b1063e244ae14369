import { escapeHtml } from "@kitajs/html";
import { Badge, type Tone } from "../../html/components.tsx";
import type { BillingStatus } from "../../store/types.ts";
import type { NumberHealth } from "../reports.ts";

/** How the console writes counts, shares and billing states. */

const fmt = new Intl.NumberFormat("en-US");
export const count = (n: number) => fmt.format(n);
export const share = (rate: number | null) => (rate === null ? "–" : `${(rate * 100).toFixed(1)} %`);
export const perMinute = (n: number) => (n >= 10 ? fmt.format(Math.round(n)) : n.toFixed(1));

export const BILLING: Record<BillingStatus, { text: string; tone: Tone }> = {
  active: { text: "Active", tone: "ok" },
  none: { text: "No subscription", tone: "plain" },
  overdue: { text: "Payment overdue", tone: "warn" },
  suspended: { text: "Suspended", tone: "bad" },
};

export function BillingBadge(props: { status: BillingStatus }) {
  return <Badge tone={BILLING[props.status].tone} text={BILLING[props.status].text} />;
}

export const accountPath = (id: string) => `/operator/accounts/${encodeURIComponent(id)}`;

/** A number's name: its display number, or its id. */
export const numberName = (n: NumberHealth["number"]) => n.displayPhoneNumber ?? n.phoneNumberId;

/**
 * A number's health in the dashboard's words: the state, why (the upstream answer that set it),
 * and why the last check failed when no such answer says it already.
 */
export function Health(props: { health: NumberHealth }) {
  const { condition, cause, number } = props.health;
  return (
    <>
      <Badge tone={condition.usable ? "ok" : "bad"} text={condition.label} />
      {cause ? (
        <p class="small muted" safe>
          {cause}
        </p>
      ) : (
        ""
      )}
      {number.syncError && !cause ? (
        <p class="small error-text">
          Last check failed: <span safe>{number.syncError}</span>
        </p>
      ) : (
        ""
      )}
    </>
  );
}

/** A number's name, verified name and ids. */
export function NumberName(props: { number: NumberHealth["number"] }) {
  const n = props.number;
  return (
    <>
      <strong safe>{numberName(n)}</strong>
      {n.verifiedName ? <div safe>{n.verifiedName}</div> : ""}
      <div class="muted small mono">
        id <span safe>{n.phoneNumberId}</span> · WABA <span safe>{n.wabaId}</span>
      </div>
    </>
  );
}

/** A labelled count for the overview's tiles. */
export function Stat(props: { label: string; value: string; note?: string; tone?: Tone }) {
  return (
    <div class={`stat${props.tone && props.tone !== "plain" ? ` ${props.tone}` : ""}`}>
      <span class="stat-label">{escapeHtml(props.label)}</span>
      <span class="stat-value">{escapeHtml(props.value)}</span>
      {props.note ? <span class="small muted">{escapeHtml(props.note)}</span> : ""}
    </div>
  );
}
