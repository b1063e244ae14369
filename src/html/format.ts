/** How times and sizes read on the dashboard: UTC, to the second, the same for every viewer. */
export function formatTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, " UTC");
}

/** "in 5 s", "3 min ago", "2 h 5 min ago". */
export function relativeTime(ms: number, now: number): string {
  const diff = ms - now;
  const text = formatDuration(Math.abs(diff));
  if (Math.abs(diff) < 1000) return "now";
  return diff > 0 ? `in ${text}` : `${text} ago`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} days`;
}

/** A datetime-local field's value (no zone: read as UTC, as the dashboard shows times) as an ISO time. */
export const utcField = (value: string | undefined): string | undefined =>
  value ? (/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`) : undefined;
