import { SESSION_TTL_MS } from "../auth/sign-in.ts";
import { SIGN_IN_WINDOW_MS } from "../auth/throttle.ts";
import type { Config } from "../config/config.ts";
import type { LogCutoff } from "../store/requests.ts";
import type { Store } from "../store/store.ts";
import type { Retention } from "../store/types.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** What an account's retention setting keeps its history for: webhook deliveries, payloads, the request log. */
export const ACCOUNT_RETENTION_MS: Record<Retention, number> = { "24h": DAY, "7d": 7 * DAY };
/** How long an account's own audit entries are kept: as its history, never longer than AUDIT_RETENTION (`auditMs`). */
export const accountAuditKept = (auditMs: number): Record<Retention, number> => ({
  "24h": Math.min(ACCOUNT_RETENTION_MS["24h"], auditMs),
  "7d": Math.min(ACCOUNT_RETENTION_MS["7d"], auditMs),
});
/** Hourly usage counts outlive the log they come from: long enough to bill a month and compare it with the last. */
export const USAGE_KEPT_MS = 62 * DAY;

/**
 * How long a policy keeps a row: its account's retention setting (ACCOUNT_RETENTION_MS), until the
 * row's own expiry, the operator's AUDIT_RETENTION, or this many ms after the row's time.
 */
export type Window = "account" | "expiry" | "AUDIT_RETENTION" | number;

/** Where one run of a policy cuts, at `now`. */
export interface Cut {
  now: number;
  /** A fixed window's cut-off: rows older than this go (`now` for the other windows). */
  before: number;
  /** Each account's cut-off: now less its setting's length, or less the fixed window. */
  accounts: LogCutoff[];
}

/**
 * One table's retention, as data: adding a table to purge is one more entry of RETENTION_POLICIES
 * (its metrics and its line in docs/operations.md#retention follow).
 */
export interface RetentionPolicy {
  /** Its label on the metrics and in the log. */
  name: string;
  /** What it deletes, in a reader's words (docs/operations.md#retention). */
  deletes: string;
  window: Window;
  /** Rows deleted per transaction: the longest one purge holds the database (and SQLite the server's thread). */
  batch: number;
  /** Deletes what is past `cut`, `batch` rows at a time; resolves to the rows removed. */
  purge(store: Store, cut: Cut, batch: number): Promise<number>;
}

/**
 * Every table that is purged, in the order a run takes them. On PostgreSQL every instance runs
 * them: each deletion is idempotent, and the webhook history's batches take an advisory lock so
 * that one instance purges it at a time (src/store/postgres/retention.ts).
 */
export const RETENTION_POLICIES: readonly RetentionPolicy[] = [
  {
    name: "webhook_history",
    deletes:
      "Webhook deliveries with their attempts, the events (and their payloads) no delivery refers to any more, and endpoints' hourly counts",
    window: "account",
    // A few milliseconds of SQLite's thread per batch (bench/webhooks/purge.ts).
    batch: 100,
    purge: async (store, { now }, batch) => {
      const removed = await store.retention.purgeWebhookHistory(now, ACCOUNT_RETENTION_MS, batch);
      return removed.deliveries + removed.events;
    },
  },
  {
    name: "request_log",
    deletes: "The request log's records of proxied calls",
    window: "account",
    // Larger: the log is written on a thread (SQLite) or connection (PostgreSQL) of its own.
    batch: 5_000,
    purge: (store, { accounts }, batch) => store.requests.purgeRecords(accounts, batch),
  },
  {
    name: "usage",
    deletes: "Hourly usage counts per number",
    window: USAGE_KEPT_MS,
    batch: 5_000,
    purge: (store, { accounts }, batch) => store.requests.purgeUsage(accounts, batch),
  },
  {
    name: "event_counts",
    deletes: "Hourly counts of upstream events received, for the operator's overview",
    window: USAGE_KEPT_MS,
    batch: 5_000,
    purge: (store, { before }, batch) => store.retention.purgeEventCounts(before, batch),
  },
  {
    name: "sessions",
    deletes: `Dashboard sessions, ${SESSION_TTL_MS / HOUR} hours after their sign-in`,
    window: "expiry",
    batch: 1_000,
    purge: (store, { now }, batch) => store.retention.purgeSessions(now, batch),
  },
  {
    name: "sign_in_counts",
    deletes:
      "Sign-in attempts counted per email and client address and per address, to slow down guessing (both doors)",
    window: SIGN_IN_WINDOW_MS,
    batch: 1_000,
    purge: (store, { before }, batch) => store.retention.purgeSignInCounts(before, batch),
  },
  {
    name: "operator_sessions",
    deletes: `Operator console sessions, ${SESSION_TTL_MS / HOUR} hours after their sign-in`,
    window: "expiry",
    batch: 1_000,
    purge: (store, { now }, batch) => store.retention.purgeOperatorSessions(now, batch),
  },
  {
    name: "onboardings",
    deletes:
      "Embedded Signup onboardings never finished, `EMBEDDED_SIGNUP_EXPIRY` after their code came (the number is free again), and the sealed code, token and PIN of a finished one's later run",
    window: "expiry",
    batch: 100,
    purge: (store, { now }, batch) => store.retention.purgeOnboardings(now, batch),
  },
  {
    // The account's window: a recover's report speaks of deliveries that go after it.
    name: "recoveries",
    deletes: "Finished bulk recovers, counted from their end",
    window: "account",
    batch: 100,
    purge: (store, { now }, batch) => store.retention.purgeRecoveries(now, ACCOUNT_RETENTION_MS, batch),
  },
  {
    name: "instances",
    deletes:
      "Instances (scale-out mode) that have not beaten for a day: ones that died with no other alive to take them for dead, or whose id was not used again",
    window: DAY,
    batch: 1_000,
    purge: (store, { before }, batch) => store.instances.forgetGone(before, batch),
  },
  {
    name: "audit_log",
    deletes: "Audit log entries: who changed what, when, from where",
    window: "AUDIT_RETENTION",
    batch: 5_000,
    purge: (store, { now, before }, batch) =>
      store.retention.purgeAudit(before, now, accountAuditKept(now - before), batch),
  },
];

/** Where a policy with this window cuts at `now`, for the accounts there are, under `config`'s settings. */
export function cutOf(
  window: Window,
  now: number,
  accounts: { id: string; retention: Retention }[],
  config: Pick<Config, "auditRetentionMs">,
): Cut {
  const fixed = window === "AUDIT_RETENTION" ? config.auditRetentionMs : window;
  const length = (retention: Retention) =>
    fixed === "account" ? ACCOUNT_RETENTION_MS[retention] : fixed === "expiry" ? 0 : fixed;
  return {
    now,
    before: typeof fixed === "number" ? now - fixed : now,
    accounts: accounts.map((a) => ({ accountId: a.id, before: now - length(a.retention) })),
  };
}
