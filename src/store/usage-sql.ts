import type { CallTotal, DailyUsage } from "./requests.ts";

type Row = Record<string, unknown>;

const DAY_MS = 86_400_000;

/**
 * The usage reports' statements over usage_hours, the same text on both backends (`$1`… are
 * positional on each, and integer division floors on each).
 */
export const USAGE_SQL = {
  callTotals: `SELECT account_id, kind, sum(count) AS count FROM usage_hours
    WHERE hour >= $1 AND hour < $2 GROUP BY account_id, kind`,
  usageByDay: (
    oneAccount: boolean,
  ) => `SELECT account_id, target_id, (hour / ${DAY_MS}) * ${DAY_MS} AS day, kind, label,
    sum(count) AS count FROM usage_hours WHERE hour >= $1 AND hour < $2${oneAccount ? " AND account_id = $3" : ""}
    GROUP BY account_id, day, target_id, kind, label ORDER BY account_id, day, target_id, kind, label`,
};

/** PostgreSQL's sums come back as text (bigint). */
const n = (value: unknown) => Number(value ?? 0);

export const toCallTotal = (row: Row): CallTotal => ({
  accountId: row.account_id as string,
  kind: row.kind as CallTotal["kind"],
  count: n(row.count),
});

export const toDailyUsage = (row: Row): DailyUsage => ({
  accountId: row.account_id as string,
  targetId: row.target_id as string,
  day: n(row.day),
  kind: row.kind as DailyUsage["kind"],
  label: row.label as string,
  count: n(row.count),
});
