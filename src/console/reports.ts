import { getAccount } from "../accounts/accounts.ts";
import type { Backups } from "../backup/backups.ts";
import { type BackupState, backupState } from "./backup-report.ts";
import { numberUsage, USAGE_WINDOW_MS, type NumberUsage } from "../html/usage.ts";
import { causeText, numberCondition, type NumberCondition, type NumberState } from "../numbers/condition.ts";
import type { Deps } from "../deps.ts";
import type { Endpoint } from "../store/endpoints.ts";
import { HOUR, hourOf } from "../store/hours.ts";
import type { DeliveryTotals, DisabledEndpoint, EventCounts } from "../store/overview.ts";
import type { CallTotal } from "../store/requests.ts";
import type { Account, ApiKey, PhoneNumber, User, Waba } from "../store/types.ts";
import { monthOf } from "../requests/usage-report.ts";

/**
 * What the console's pages show, as plain functions over the store: the overview across every
 * account, the accounts list, one account, and the numbers of every account by health.
 */
type ReportDeps = Pick<Deps, "store" | "clock" | "config" | "limits">;

const DAY = 24 * HOUR;
/** Disabled endpoints the overview lists at most. */
const DISABLED_SHOWN = 50;

/** Proxied calls of a window, counted by the hour (the request log's usage counts). */
export interface CallWindow {
  /** Start of the first hour counted. */
  since: number;
  forwarded: number;
  upstreamErrors: number;
  refused: number;
  perMinute: number;
  /** Upstream error answers among the calls upstream answered; null when it answered none. */
  errorRate: number | null;
}

function callWindow(totals: CallTotal[], since: number, now: number): CallWindow {
  const sum = (kind: CallTotal["kind"]) => totals.filter((t) => t.kind === kind).reduce((n, t) => n + t.count, 0);
  const forwarded = sum("forwarded");
  const upstreamErrors = sum("upstream_error");
  const refused = sum("refused");
  const minutes = Math.max(1, (now - since) / 60_000);
  const answered = forwarded + upstreamErrors;
  return {
    since,
    forwarded,
    upstreamErrors,
    refused,
    perMinute: (forwarded + upstreamErrors + refused) / minutes,
    errorRate: answered === 0 ? null : upstreamErrors / answered,
  };
}

/** A number with its account and its condition in the dashboard's words. */
export interface NumberHealth {
  number: PhoneNumber;
  account: Account;
  condition: NumberCondition;
  /** The upstream answer that set its state, in words; null when none did. */
  cause: string | null;
}

function health(deps: ReportDeps, number: PhoneNumber, account: Account): NumberHealth {
  const condition = numberCondition(number, deps.store.directory.waba(number.wabaId), {
    signup: deps.config.embeddedSignup !== null,
  });
  return { number, account, condition, cause: condition.cause && causeText(condition.cause) };
}

/** Every number of every account (or of one), by account name then number id. */
function allNumbers(deps: ReportDeps, accounts: Account[]): NumberHealth[] {
  return accounts.flatMap((account) =>
    deps.store.directory
      .numbers(account.id)
      .sort((a, b) => a.phoneNumberId.localeCompare(b.phoneNumberId))
      .map((n) => health(deps, n, account)),
  );
}

const byName = (accounts: Account[]) =>
  [...accounts].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));

export interface Overview {
  now: number;
  calls: { hour: CallWindow; day: CallWindow };
  /** Upstream events accepted by the hour (since the start of the hour before this one, and the day before). */
  events: { hour: EventCounts; day: EventCounts };
  accounts: number;
  /** Numbers of every account, whatever their state. */
  numbers: number;
  deliveries: { pending: number; day: DeliveryTotals };
  failingEndpoints: number;
  disabled: (DisabledEndpoint & { accountName: string })[];
  notConnected: NumberHealth[];
  storage: { kind: "sqlite" | "postgres"; healthy: boolean };
  /** Null when the rate limits' buckets are this process's own (no Redis). */
  redis: { healthy: boolean } | null;
  backups: BackupState;
}

/** GET /operator: the service at a glance; `backups` is null where the database is not a SQLite file. */
export async function overview(deps: ReportDeps, backups: Backups | null): Promise<Overview> {
  const now = deps.clock.now();
  const hourSince = hourOf(now) - HOUR;
  const daySince = hourOf(now) - DAY;
  const end = hourOf(now) + HOUR;
  const { overview: o } = deps.store;
  const none = { received: 0, unrouted: 0 };
  const [
    hourCalls,
    dayCalls,
    [eventsHour = none, eventsDay = none],
    pending,
    day,
    failing,
    disabled,
    storageOk,
    redisOk,
  ] = await Promise.all([
    deps.store.requests.callTotals(hourSince, end),
    deps.store.requests.callTotals(daySince, end),
    o.eventsSince([hourSince, daySince]),
    deps.store.queue.pendingCount(),
    o.deliveriesSince(daySince),
    o.failingEndpoints(),
    o.disabledSince(now - DAY, DISABLED_SHOWN),
    deps.store.healthy(),
    deps.limits.healthy?.() ?? Promise.resolve(null),
  ]);
  const accountName = (id: string) => deps.store.directory.account(id)?.name ?? id;
  const numbers = allNumbers(deps, byName(deps.store.directory.accounts()));
  return {
    now,
    calls: { hour: callWindow(hourCalls, hourSince, now), day: callWindow(dayCalls, daySince, now) },
    events: { hour: eventsHour, day: eventsDay },
    deliveries: { pending, day },
    failingEndpoints: failing,
    disabled: disabled.map((e) => ({ ...e, accountName: accountName(e.accountId) })),
    notConnected: numbers.filter((n) => !n.condition.usable),
    accounts: deps.store.directory.accounts().length,
    numbers: numbers.length,
    storage: { kind: deps.config.database.kind, healthy: storageOk },
    redis: redisOk === null ? null : { healthy: redisOk },
    backups: await backupState(backups, deps.config.backup.schedule),
  };
}

export interface AccountRow {
  account: Account;
  numbers: number;
  unusableNumbers: number;
  activeKeys: number;
  callsThisMonth: number;
}

/** The accounts list, by name; `search` matches a part of the name, email or id, in any case. */
export async function accountRows(deps: ReportDeps, search: string): Promise<AccountRow[]> {
  const now = deps.clock.now();
  const totals = await deps.store.requests.callTotals(monthOf(now), hourOf(now) + HOUR);
  const calls = new Map<string, number>();
  for (const t of totals) calls.set(t.accountId, (calls.get(t.accountId) ?? 0) + t.count);
  const needle = search.trim().toLowerCase();
  return byName(deps.store.directory.accounts())
    .filter((a) => !needle || [a.name, a.email, a.id].some((text) => text.toLowerCase().includes(needle)))
    .map((account) => {
      const numbers = allNumbers(deps, [account]);
      return {
        account,
        numbers: numbers.length,
        unusableNumbers: numbers.filter((n) => !n.condition.usable).length,
        activeKeys: deps.store.directory.apiKeys(account.id).filter((k) => k.revokedAt === null).length,
        callsThisMonth: calls.get(account.id) ?? 0,
      };
    });
}

/** An endpoint with its attempts of the last 24 hours. */
export interface EndpointHealth {
  endpoint: Endpoint;
  succeeded: number;
  failed: number;
  /** Succeeded among attempts, null with none. */
  successRate: number | null;
}

export interface AccountDetail {
  account: Account;
  users: User[];
  keys: ApiKey[];
  wabas: Waba[];
  numbers: NumberHealth[];
  usage: Map<string, NumberUsage>;
  endpoints: EndpointHealth[];
  now: number;
}

/** One account's page (404 for an id no account has). */
export async function accountDetail(deps: ReportDeps, id: string): Promise<AccountDetail> {
  const account = getAccount(deps, id);
  const now = deps.clock.now();
  const [users, endpoints, counts] = await Promise.all([
    deps.store.users.ofAccount(id),
    deps.store.endpoints.ofAccount(id),
    deps.store.requests.usage(id, now - USAGE_WINDOW_MS - DAY, now + HOUR),
  ]);
  return {
    account,
    users,
    keys: deps.store.directory.apiKeys(id).sort((a, b) => b.createdAt - a.createdAt),
    wabas: deps.store.directory.wabas(id).sort((a, b) => a.wabaId.localeCompare(b.wabaId)),
    numbers: allNumbers(deps, [account]),
    usage: numberUsage(counts, now),
    endpoints: await Promise.all(
      endpoints.map(async (endpoint) => {
        const hours = await deps.store.history.hourlyStats(endpoint.id, now - 23 * HOUR, now);
        const succeeded = hours.reduce((n, h) => n + h.succeeded, 0);
        const failed = hours.reduce((n, h) => n + h.failed, 0);
        return {
          endpoint,
          succeeded,
          failed,
          successRate: succeeded + failed === 0 ? null : succeeded / (succeeded + failed),
        };
      }),
    ),
    now,
  };
}

/** The numbers page's filters: a state (or every unusable one), and a cause (an upstream error code, or none). */
export interface NumberFilter {
  state?: NumberState | "unusable";
  /** An upstream error code as text, or "none" for states set by hand. */
  cause?: string;
}

/** Numbers of every account by health, with the causes present (for the filter's choices). */
export function numbersAcross(deps: ReportDeps, filter: NumberFilter): { rows: NumberHealth[]; causes: number[] } {
  const all = allNumbers(deps, byName(deps.store.directory.accounts()));
  const causes = [...new Set(all.flatMap((n) => (n.condition.cause ? [n.condition.cause.code] : [])))].sort(
    (a, b) => a - b,
  );
  const rows = all.filter((n) => {
    if (filter.state === "unusable" ? n.condition.usable : filter.state && n.condition.state !== filter.state)
      return false;
    if (filter.cause === "none") return n.condition.cause === null;
    return !filter.cause || String(n.condition.cause?.code) === filter.cause;
  });
  return { rows, causes };
}
