import { escapeHtml } from "@kitajs/html";

import type { HourBucket } from "./webhook-shapes.ts";

const BAR = 8;
const GAP = 2;
const PLOT = 48;

function hourLabel(iso: string | null): string {
  return iso === null ? "" : `${iso.slice(11, 16)} UTC`;
}

/**
 * The last hours of an endpoint as stacked bars (succeeded, failed attempts, parked), drawn on the
 * server as SVG: colours come from CSS classes (the CSP allows no inline style), each bar has a
 * tooltip, and the whole chart has a text summary for screen readers.
 */
export function DeliveryChart(props: { hours: HourBucket[]; size?: "small" | "large"; label: string }) {
  const { hours } = props;
  const total = (key: "succeeded" | "failed" | "parked") => hours.reduce((sum, h) => sum + h[key], 0);
  const peak = Math.max(1, ...hours.map((h) => h.succeeded + h.failed + h.parked));
  const width = hours.length * (BAR + GAP);
  const large = props.size === "large";
  const height = PLOT + (large ? 14 : 2);
  const summary = `${props.label}: ${total("succeeded")} succeeded, ${total("failed")} failed attempts, ${total("parked")} parked in the last ${hours.length} hours`;
  const scale = (n: number) => (n === 0 ? 0 : Math.max(1, Math.round((n / peak) * PLOT)));
  return (
    <figure class={`chart ${large ? "large" : "small"}`}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary} focusable="false">
        <line class="axis" x1="0" y1={String(PLOT + 0.5)} x2={String(width)} y2={String(PLOT + 0.5)} />
        {hours.map((h, i) => {
          const x = i * (BAR + GAP);
          const ok = scale(h.succeeded);
          const failed = scale(h.failed);
          const parked = scale(h.parked);
          return (
            <g>
              <title>{escapeHtml(`${hourLabel(h.hour)}: ${h.succeeded} succeeded, ${h.failed} failed, ${h.parked} parked`)}</title>
              <rect x={String(x)} y="0" width={String(BAR)} height={String(PLOT)} fill="transparent" />
              {ok ? <rect class="bar-ok" x={String(x)} y={String(PLOT - ok)} width={String(BAR)} height={String(ok)} /> : ""}
              {failed ? <rect class="bar-failed" x={String(x)} y={String(PLOT - ok - failed)} width={String(BAR)} height={String(failed)} /> : ""}
              {parked ? <rect class="bar-parked" x={String(x)} y={String(PLOT - ok - failed - parked)} width={String(BAR)} height={String(parked)} /> : ""}
            </g>
          );
        })}
        {large && hours.length > 0
          ? <>
              <text class="tick" x="0" y={String(height - 2)}>{escapeHtml(hourLabel(hours[0]!.hour))}</text>
              <text class="tick" x={String(width)} y={String(height - 2)} text-anchor="end">now</text>
            </>
          : ""}
      </svg>
      {large
        ? <figcaption>
            <ul class="legend">
              <li class="ok">{total("succeeded")} succeeded</li>
              <li class="failed">{total("failed")} failed attempts</li>
              <li class="parked">{total("parked")} parked</li>
            </ul>
          </figcaption>
        : <figcaption class="small muted">{total("succeeded")} ok · {total("failed")} failed · {total("parked")} parked</figcaption>}
    </figure>
  );
}
