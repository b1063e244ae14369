import { HOUR, hourOf } from "../store/hours.ts";
import type { UsageCount } from "../store/requests.ts";
import type { UsageBar } from "./chart.tsx";

const DAY = 24 * HOUR;

/** A number's charts: the last 24 hours by hour, the last 7 days by day (UTC), oldest first. */
export interface NumberUsage {
  hours: UsageBar[];
  days: UsageBar[];
}

/** The usage counts of the last 7 days (src/store/requests.ts) as each number's two charts. */
export function numberUsage(counts: UsageCount[], now: number): Map<string, NumberUsage> {
  const thisHour = hourOf(now);
  const today = Math.floor(now / DAY) * DAY;
  const bars = (first: number, step: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      start: new Date(first + i * step).toISOString(),
      forwarded: 0,
      upstreamErrors: 0,
      refused: 0,
    }));
  const out = new Map<string, NumberUsage>();
  for (const c of counts) {
    let usage = out.get(c.targetId);
    if (!usage) {
      usage = { hours: bars(thisHour - 23 * HOUR, HOUR, 24), days: bars(today - 6 * DAY, DAY, 7) };
      out.set(c.targetId, usage);
    }
    const field = c.kind === "forwarded" ? "forwarded" : c.kind === "upstream_error" ? "upstreamErrors" : "refused";
    // An hour or a day outside the charts has no bar.
    const hourBar = usage.hours[(c.hour - (thisHour - 23 * HOUR)) / HOUR];
    if (hourBar) hourBar[field] += c.count;
    const dayBar = usage.days[Math.floor((c.hour - (today - 6 * DAY)) / DAY)];
    if (dayBar) dayBar[field] += c.count;
  }
  return out;
}

export const USAGE_WINDOW_MS = 7 * DAY;
