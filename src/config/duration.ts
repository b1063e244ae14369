const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `250ms`, `5s`, `1m`, `2h`, `90d` into milliseconds; null when the text is not such a duration. */
export function parseDuration(text: string): number | null {
  const [, amount, unit = ""] = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim()) ?? [];
  const factor = UNITS[unit];
  if (amount === undefined || factor === undefined) return null;
  const ms = Number(amount) * factor;
  return Number.isFinite(ms) ? Math.round(ms) : null;
}
