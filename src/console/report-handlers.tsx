import { ACTION_KINDS, auditView, listAudit } from "../audit/queries.ts";
import { recordedBackup } from "../backup/audit.ts";
import type { Backups } from "../backup/backups.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors/catalog.ts";
import { Notice } from "../html/components.tsx";
import { utcField } from "../html/format.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import { NotFound } from "../html/not-found.tsx";
import type { PageContext } from "../html/page-context.ts";
import { dailyUsage, dayText, usageTotals } from "../requests/usage-report.ts";
import { checkedFlash } from "./account-handlers.tsx";
import { backupState } from "./backup-report.ts";
import type { ConsoleHandler } from "./guard.ts";
import { consolePage } from "./layout.tsx";
import { AuditPage, type AuditPageFilter } from "./pages/audit.tsx";
import { BackupsPage } from "./pages/backups.tsx";
import { NumbersPage } from "./pages/numbers.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { UsagePage } from "./pages/usage.tsx";
import { numbersAcross, overview, type NumberFilter } from "./reports.ts";

export const showOverview =
  (deps: Deps, backups: Backups | null): ConsoleHandler =>
  async (_ctx, operator) =>
    consolePage(operator, "Overview", "overview", OverviewPage({ o: await overview(deps, backups) }));

export const listNumbers =
  (deps: Deps): ConsoleHandler =>
  async ({ query }, operator) => {
    const filter: NumberFilter = {
      state: (query.state || undefined) as NumberFilter["state"],
      cause: query.cause || undefined,
    };
    const { rows, causes } = numbersAcross(deps, filter);
    const checked = query.checked
      ? numbersAcross(deps, {}).rows.find((h) => h.number.phoneNumberId === query.checked)
      : undefined;
    return consolePage(
      operator,
      "Numbers",
      "numbers",
      NumbersPage({ rows, causes, filter, now: deps.clock.now(), flash: checkedFlash(checked) }),
    );
  };

const accountsByName = (deps: Deps) =>
  [...deps.store.directory.accounts()].sort((a, b) => a.name.localeCompare(b.name));

export const showUsage =
  (deps: Deps): ConsoleHandler =>
  async ({ query }, operator) => {
    const by = query.by === "month" ? "month" : "day";
    const { period, rows } = await dailyUsage(deps, query);
    const csv = new URLSearchParams({
      from: new Date(period.from).toISOString(),
      to: new Date(period.to).toISOString(),
      ...(query.account_id ? { account_id: query.account_id } : {}),
    });
    return consolePage(
      operator,
      "Usage",
      "usage",
      UsagePage({
        accounts: accountsByName(deps),
        query: { account_id: query.account_id, from: query.from, to: query.to, by },
        first: dayText(period.from),
        last: dayText(period.to - 1),
        rows: usageTotals(rows, by),
        csv: `/admin/usage.csv?${csv}`,
      }),
    );
  };

/** The audit entries the filter picks; a hand-made filter that is not valid is said, over no entries. */
async function auditEntries(deps: Deps, filter: AuditPageFilter, cursor: string | undefined) {
  try {
    // The page's time fields have no zone: read as UTC, as every time on it is shown.
    const result = await listAudit(deps, { ...filter, from: utcField(filter.from), to: utcField(filter.to), cursor });
    return { result, refused: undefined };
  } catch (error) {
    // What the form sends is always valid.
    if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
    return { result: { data: [], nextCursor: null }, refused: error.message };
  }
}

export const showAudit =
  (deps: Deps): ConsoleHandler =>
  async ({ query }, operator) => {
    const filter: AuditPageFilter = {
      account_id: query.account_id || undefined,
      actor: query.actor || undefined,
      action: query.action || undefined,
      from: query.from || undefined,
      to: query.to || undefined,
    };
    const { result, refused } = await auditEntries(deps, filter, query.cursor || undefined);
    return consolePage(
      operator,
      "Audit log",
      "audit",
      AuditPage({
        entries: result.data.map(auditView),
        accounts: accountsByName(deps),
        kinds: ACTION_KINDS,
        filter,
        refused,
        nextCursor: result.nextCursor,
        firstPage: !query.cursor,
        now: deps.clock.now(),
      }),
    );
  };

async function backupsPage(deps: Deps, backups: Backups | null, flash: JSX.Element | undefined) {
  const state = await backupState(backups, deps.config.backup.schedule);
  return BackupsPage({ state, now: deps.clock.now(), flash });
}

export const showBackups =
  (deps: Deps, backups: Backups | null): ConsoleHandler =>
  async ({ query }, operator) => {
    const started = typeof query.started === "string" ? query.started : null;
    const flash = started ? (
      <Notice tone="ok">
        <p>
          A backup is being taken: <code safe>{started}</code>. It shows below once it is verified and stored.
        </p>
      </Notice>
    ) : undefined;
    return consolePage(operator, "Backups", "backups", await backupsPage(deps, backups, flash));
  };

export const takeBackup =
  (deps: Deps, backups: Backups | null): ConsoleHandler =>
  async (_ctx, operator, by) => {
    if (backups === null) throw new AppError("backup_unsupported");
    try {
      const { name, done } = await backups.start();
      // A failure is logged, counted, and shown on this page (Last failure) by Backups.
      recordedBackup(deps, done, by).catch(() => undefined);
      return seeOther(`/operator/backups?started=${encodeURIComponent(name)}`);
    } catch (error) {
      if (!(error instanceof AppError) || error.errorName !== "backup_running") throw error;
      const flash = (
        <Notice tone="warn">
          <p safe>{error.message}</p>
        </Notice>
      );
      return htmlResponse(consolePage(operator, "Backups", "backups", await backupsPage(deps, backups, flash)), 409);
    }
  };

export const notFound: ConsoleHandler = async (_ctx: PageContext, operator) =>
  htmlResponse(consolePage(operator, "Not found", null, NotFound()), 404);
