import { t } from "elysia";
import { getAccount } from "../accounts/accounts.ts";
import { AppError } from "../errors/catalog.ts";
import { timeParam } from "../http/time-param.ts";
import type { Deps } from "../deps.ts";
import { HOUR, hourOf } from "../store/hours.ts";
import type { DailyUsage } from "../store/requests.ts";

/**
 * Usage for billing (docs/operations.md#request-log-and-usage): calls per account, number, UTC day, kind and label, read from
 * the request log's hourly counts. The CSV an operator bills from and the console's Usage page
 * read the same rows.
 */

export const usageReportQuery = t.Object({
  account_id: t.Optional(t.String({ maxLength: 64 })),
  from: t.Optional(t.String({ maxLength: 40 })),
  to: t.Optional(t.String({ maxLength: 40 })),
});
export type UsageReportQuery = typeof usageReportQuery.static;

/** The first instant of the UTC month of `ms`. */
export const monthOf = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};

/** The hours a report covers: those that start in [from, to). */
export interface UsagePeriod {
  from: number;
  to: number;
}

/**
 * The period of a report's query: `from` (an ISO 8601 date or time) defaults to the start of this
 * UTC month, `to` to the end of the current hour; both are whole hours.
 */
export function usagePeriod(now: number, query: Pick<UsageReportQuery, "from" | "to">): UsagePeriod {
  const from = hourOf(timeParam("from", query.from) ?? monthOf(now));
  const to = timeParam("to", query.to) ?? hourOf(now) + HOUR;
  if (to < from) throw new AppError("invalid_request", "to must not be before from.");
  return { from, to };
}

/** The report's rows: one account's (404 when there is no such account) or every account's. */
export async function dailyUsage(
  deps: Pick<Deps, "store" | "clock">,
  query: UsageReportQuery,
): Promise<{ period: UsagePeriod; rows: DailyUsage[] }> {
  const accountId = query.account_id || null;
  if (accountId !== null) getAccount(deps, accountId);
  const period = usagePeriod(deps.clock.now(), query);
  return { period, rows: await deps.store.requests.usageByDay(accountId, period.from, period.to) };
}

export const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Where a spreadsheet may start a cell, followed by what makes it a formula (OWASP, CSV
 * injection): the cell's start, and the start of each part after a `,` or `;`, which a spreadsheet
 * set to split on `;` (or splitting naively) reads as a cell of its own, quotes or not.
 */
const FORMULA_START = /(^|[,;\t])( *)(?=[=+\-@\t\r])/g;

/**
 * A cell of CSV text (docs/operations.md#operator-api): each part a spreadsheet would run as a
 * formula (after the start, a comma, semicolon or tab, and any spaces) is kept text by an
 * apostrophe before it, and a cell holding a comma, semicolon, tab, quote or line break is quoted.
 */
function cell(value: string | number): string {
  if (typeof value === "number") return String(value);
  const text = value.replace(FORMULA_START, "$1$2'");
  return /[",;\t\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const CSV_HEADER = ["account_id", "account_name", "target_id", "day", "kind", "label", "count"];

/** One line per account, number (or WABA), day, kind and label. */
export function usageCsv(rows: DailyUsage[], accountName: (id: string) => string): string {
  const lines = [CSV_HEADER.join(",")];
  for (const r of rows) {
    lines.push(
      [r.accountId, accountName(r.accountId), r.targetId, dayText(r.day), r.kind, r.label, r.count].map(cell).join(","),
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}

/** GET /admin/usage.csv: the report as a file to download. */
export async function usageCsvResponse(deps: Pick<Deps, "store" | "clock">, query: UsageReportQuery) {
  const { period, rows } = await dailyUsage(deps, query);
  const name = `switchboard-usage-${dayText(period.from)}-to-${dayText(period.to - 1)}${query.account_id ? `-${query.account_id}` : ""}.csv`;
  return new Response(
    usageCsv(rows, (id) => deps.store.directory.account(id)?.name ?? ""),
    {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${name.replace(/[^0-9A-Za-z._-]/g, "_")}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    },
  );
}

/** The Usage page's query: the report's, and whether to total per day or per month. */
export const usagePageQuery = t.Object({
  ...usageReportQuery.properties,
  by: t.Optional(t.Union([t.Literal("day"), t.Literal("month"), t.Literal("")])),
});

/** Calls of one account's number (or WABA) in one day or month, by kind. */
export interface UsageTotal {
  accountId: string;
  targetId: string;
  /** 2026-01-31, or 2026-01 for a month. */
  period: string;
  forwarded: number;
  upstreamErrors: number;
  refused: number;
}

/** The report's rows totalled per account, number and day (or month), labels summed; by account, period, number. */
export function usageTotals(rows: DailyUsage[], by: "day" | "month"): UsageTotal[] {
  const totals = new Map<string, UsageTotal>();
  for (const r of rows) {
    const period = by === "month" ? dayText(r.day).slice(0, 7) : dayText(r.day);
    const key = `${r.accountId}\u0000${period}\u0000${r.targetId}`;
    let total = totals.get(key);
    if (!total) {
      total = { accountId: r.accountId, targetId: r.targetId, period, forwarded: 0, upstreamErrors: 0, refused: 0 };
      totals.set(key, total);
    }
    if (r.kind === "forwarded") total.forwarded += r.count;
    else if (r.kind === "upstream_error") total.upstreamErrors += r.count;
    else total.refused += r.count;
  }
  return [...totals.values()].sort(
    (a, b) =>
      a.accountId.localeCompare(b.accountId) ||
      a.period.localeCompare(b.period) ||
      a.targetId.localeCompare(b.targetId),
  );
}
