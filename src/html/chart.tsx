import { escapeHtml } from "@kitajs/html";

import type { HourBucket } from "./webhook-shapes.ts";

const BAR = 8;
const GAP = 2;
const PLOT = 48;

function hourLabel(iso: string | null): string {
  return iso === null ? "" : `${iso.slice(11, 16)} UTC`;
}

/** A series of stacked bars: its colour (a CSS class: the CSP allows no inline style) and its words. */
interface Series {
  tone: "ok" | "failed" | "parked";
  /** In the legend and the summary, after its total: "succeeded". */
  name: string;
  /** In the small chart's caption: "ok". */
  short: string;
}

/**
 * Stacked bars over time, drawn on the server as SVG: each bar has a tooltip, and the whole chart
 * a text summary for screen readers. `values` of a bar follow `series`, bottom first.
 */
function StackedBars(props: {
  bars: { tip: string; values: number[] }[];
  series: Series[];
  label: string;
  /** "in the last 24 hours" */
  period: string;
  /** The first bar's tick, on a large chart. */
  start: string;
  size?: "small" | "large";
  /** Of each bar: wider for fewer bars, so every chart of a page is about as wide. */
  barWidth?: number;
}) {
  const { bars, series } = props;
  const totals = series.map((_, i) => bars.reduce((sum, b) => sum + (b.values[i] ?? 0), 0));
  const peak = Math.max(1, ...bars.map((b) => b.values.reduce((a, v) => a + v, 0)));
  const bar = props.barWidth ?? BAR;
  const width = bars.length * (bar + GAP);
  const large = props.size === "large";
  const height = PLOT + (large ? 14 : 2);
  const summary = `${props.label}: ${series.map((s, i) => `${totals[i]} ${s.name}`).join(", ")} ${props.period}`;
  const scale = (n: number) => (n === 0 ? 0 : Math.max(1, Math.round((n / peak) * PLOT)));
  return (
    <figure class={`chart ${large ? "large" : "small"}`}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary} focusable="false">
        <line class="axis" x1="0" y1={String(PLOT + 0.5)} x2={String(width)} y2={String(PLOT + 0.5)} />
        {bars.map((b, i) => {
          const x = i * (bar + GAP);
          let top = PLOT;
          return (
            <g>
              <title>{escapeHtml(b.tip)}</title>
              <rect x={String(x)} y="0" width={String(bar)} height={String(PLOT)} fill="transparent" />
              {series.map((s, j) => {
                const h = scale(b.values[j] ?? 0);
                if (h === 0) return "";
                top -= h;
                return (
                  <rect class={`bar-${s.tone}`} x={String(x)} y={String(top)} width={String(bar)} height={String(h)} />
                );
              })}
            </g>
          );
        })}
        {large && bars.length > 0 ? (
          <>
            <text class="tick" x="0" y={String(height - 2)}>
              {escapeHtml(props.start)}
            </text>
            <text class="tick" x={String(width)} y={String(height - 2)} text-anchor="end">
              now
            </text>
          </>
        ) : (
          ""
        )}
      </svg>
      {large ? (
        <figcaption>
          <ul class="legend">
            {series.map((s, i) => (
              <li class={s.tone}>{escapeHtml(`${totals[i]} ${s.name}`)}</li>
            ))}
          </ul>
        </figcaption>
      ) : (
        <figcaption class="small muted">
          {escapeHtml(series.map((s, i) => `${totals[i]} ${s.short}`).join(" · "))}
        </figcaption>
      )}
    </figure>
  );
}

const DELIVERY_SERIES: Series[] = [
  { tone: "ok", name: "succeeded", short: "ok" },
  { tone: "failed", name: "failed attempts", short: "failed" },
  { tone: "parked", name: "parked", short: "parked" },
];

/** The last hours of an endpoint: succeeded, failed attempts, parked. */
export function DeliveryChart(props: { hours: HourBucket[]; size?: "small" | "large"; label: string }) {
  return (
    <StackedBars
      bars={props.hours.map((h) => ({
        tip: `${hourLabel(h.hour)}: ${h.succeeded} succeeded, ${h.failed} failed, ${h.parked} parked`,
        values: [h.succeeded, h.failed, h.parked],
      }))}
      series={DELIVERY_SERIES}
      label={props.label}
      period={`in the last ${props.hours.length} hours`}
      start={hourLabel(props.hours[0]?.hour ?? null)}
      size={props.size}
    />
  );
}

const USAGE_SERIES: Series[] = [
  { tone: "ok", name: "forwarded", short: "forwarded" },
  { tone: "failed", name: "upstream errors", short: "upstream errors" },
  { tone: "parked", name: "refused by Switchboard", short: "refused" },
];

/** A number's proxied calls per period (hour or day): forwarded, upstream errors, our refusals. */
export interface UsageBar {
  /** Start of the period, ISO. */
  start: string;
  forwarded: number;
  upstreamErrors: number;
  refused: number;
}

export function UsageChart(props: { bars: UsageBar[]; unit: "hour" | "day"; label: string }) {
  const when = (iso: string) => (props.unit === "hour" ? hourLabel(iso) : iso.slice(0, 10));
  return (
    <StackedBars
      bars={props.bars.map((b) => ({
        tip: `${when(b.start)}: ${b.forwarded} forwarded, ${b.upstreamErrors} upstream errors, ${b.refused} refused`,
        values: [b.forwarded, b.upstreamErrors, b.refused],
      }))}
      series={USAGE_SERIES}
      label={props.label}
      period={
        props.unit === "hour" ? `in the last ${props.bars.length} hours` : `in the last ${props.bars.length} days`
      }
      start={props.bars[0] ? when(props.bars[0].start) : ""}
      barWidth={props.unit === "day" ? 32 : BAR}
    />
  );
}
