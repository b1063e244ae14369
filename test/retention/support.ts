import { SIGN_IN_WINDOW_MS } from "../../src/auth/throttle.ts";
import type { Onboarding } from "../../src/store/onboardings.ts";
import type { Recovery } from "../../src/store/recoveries.ts";
import type { Retention } from "../../src/store/types.ts";
import { onSqlite } from "../support/backend.ts";
import type { TestDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow } from "../support/queue-rows.ts";
import { onboardingRow, requestRecord as record } from "../support/store-rows.ts";

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** What a run of every policy should remove from the rows `seed` wrote, by policy. */
export const SEEDED_REMOVALS = {
  webhook_history: 4,
  request_log: 4,
  usage: 1,
  event_counts: 1,
  sessions: 1,
  sign_in_counts: 1,
  operator_sessions: 1,
  onboardings: 2,
  recoveries: 1,
  // Instances beat only on PostgreSQL (on SQLite the server is the only one, and has no row).
  instances: onSqlite ? 0 : 1,
  audit_log: 1,
};

const recovery = (id: string, accountId: string, endpointId: string, patch: Partial<Recovery>): Recovery => ({
  id,
  accountId,
  endpointId,
  since: 0,
  until: 0,
  status: "done",
  found: 0,
  replayed: 0,
  skippedExpired: 0,
  skippedReplayed: 0,
  cursor: null,
  startedAt: 0,
  updatedAt: 0,
  ...patch,
});

/**
 * For every policy, rows on each side of its window as it stands at `now` (`now` is on an hour):
 * the one just past it goes, the one at its edge stays. Two accounts: `acc_day` keeps 24 hours,
 * `acc_week` 7 days. What goes is counted in SEEDED_REMOVALS; ids of what stays start with `keep`.
 */
export async function seed(deps: TestDeps, now: number): Promise<void> {
  const { store } = deps;
  const accounts: [string, Retention][] = [
    ["acc_day", "24h"],
    ["acc_week", "7d"],
  ];
  for (const [id, retention] of accounts) {
    await store.directory.createAccount({
      id,
      name: id,
      email: `${id}@example.com`,
      billingStatus: "active",
      retention,
      maxNumbers: null,
      createdAt: now - 90 * DAY,
    });
    await store.endpoints.create(endpointRow(`ep_${id}`, id, now - 90 * DAY));
  }
  const past = (accountId: string) => (accountId === "acc_day" ? DAY : 7 * DAY);

  // Webhook history and the request log, by each account's window: a delivery and its event each.
  let n = 0;
  for (const [accountId, at] of [
    ["acc_day", now - DAY - 1],
    ["acc_day", now - DAY],
    ["acc_week", now - DAY - 1],
    ["acc_week", now - 7 * DAY - 1],
  ] as const) {
    const goes = at < now - past(accountId);
    const event = eventRow(`${goes ? "evt" : "keep_evt"}_${++n}`, accountId, at);
    await store.queue.enqueue(
      [event],
      [deliveryRow(`${goes ? "dlv" : "keep_dlv"}_${n}`, event, `ep_${accountId}`, at)],
    );
    await store.requests.append([record(`${goes ? "req" : "keep_req"}_${n}`, accountId, at)]);
  }
  // Usage is kept 62 days: the hour before that goes (its record too, past the account's window).
  await store.requests.append([record("req_usage_1", "acc_day", now - 62 * DAY - 1)]);
  await store.requests.append([record("req_usage_2", "acc_day", now - 62 * DAY)]);
  // The overview's counts of upstream events are kept as long, by the hour they count.
  await store.overview.addEventCounts([
    { hour: now - 62 * DAY - 1, received: 3, unrouted: 1 },
    { hour: now - 62 * DAY, received: 2, unrouted: 0 },
  ]);

  await store.users.create({
    id: "usr_1",
    accountId: "acc_day",
    email: "u@example.com",
    passwordHash: "x",
    createdAt: now - DAY,
  });
  for (const [tokenHash, expiresAt] of [
    ["session", now],
    ["keep_session", now + 1],
  ] as const)
    await store.sessions.create({ tokenHash, userId: "usr_1", accountId: "acc_day", createdAt: now - DAY, expiresAt });

  // Sign-in attempts are remembered for their window.
  for (const [key, at] of [
    ["gone", now - SIGN_IN_WINDOW_MS - 1],
    ["keep", now - SIGN_IN_WINDOW_MS],
  ] as const)
    await store.signIns.reserve([{ key, limit: 5, sliding: true }], at, SIGN_IN_WINDOW_MS);

  // Operators' sessions, the same window in a table of their own.
  await store.operators.create({ id: "opr_1", email: "o@example.com", passwordHash: "x", createdAt: now - DAY });
  for (const [tokenHash, expiresAt] of [
    ["operator_session", now],
    ["keep_operator_session", now + 1],
  ] as const)
    await store.operators.createSession({ tokenHash, operatorId: "opr_1", createdAt: now - DAY, expiresAt });

  // Onboardings until their expiry: an unfinished one is deleted, a finished one's lapsed run loses its secrets.
  const options = { now: now - HOUR, numberIsTheirs: false };
  const onboarding = (id: string, expiresAt: number, patch: Partial<Onboarding> = {}) =>
    onboardingRow(now - HOUR, {
      id,
      accountId: "acc_day",
      phoneNumberId: `pn_${id}`,
      codeHash: `hash-${id}`,
      expiresAt,
      ...patch,
    });
  await store.onboardings.create(onboarding("sgn_1", now), options);
  await store.onboardings.create(onboarding("keep_sgn_2", now + 1), options);
  await store.onboardings.create(
    onboarding("keep_sgn_3", now, { finishedAt: now - 2 * HOUR, accessToken: "EAAG-rerun" }),
    options,
  );

  // Finished recovers by their account's window; a running one whatever its age.
  await store.recoveries.start(recovery("rcv_1", "acc_day", "ep_acc_day", { updatedAt: now - DAY - 1 }));
  await store.recoveries.start(
    recovery("keep_rcv_2", "acc_day", "ep_acc_day", { status: "running", updatedAt: now - 30 * DAY }),
  );
  await store.recoveries.start(recovery("keep_rcv_3", "acc_week", "ep_acc_week", { updatedAt: now - DAY - 1 }));

  // Audit entries for AUDIT_RETENTION (the tests' default: 90 days), whatever their account keeps.
  for (const [id, at] of [
    ["aud_1", now - 90 * DAY - 1],
    ["keep_aud_2", now - 90 * DAY],
  ] as const)
    await store.audit.record({
      id,
      at,
      actor: { kind: "operator_token", id: "cli", email: null },
      action: "account.update",
      object: { kind: "account", id: "acc_day" },
      accountId: "acc_day",
      ip: null,
      changes: { name: ["a", "b"] },
    });
  if (!onSqlite)
    await deps.query(
      `INSERT INTO instances (id, incarnation, started_at, beat_at, beats) VALUES
        ('gone', 'inc_gone', ${now - 2 * DAY}, ${now - DAY - 1}, 9), ('keep_instance', 'inc_keep', ${now - 2 * DAY}, ${now - DAY}, 9)`,
    );
}

/** The ids left in every purged table (the request log's by its store: on SQLite it is a file of its own). */
export async function leftOver(deps: TestDeps): Promise<Record<string, unknown>> {
  const { store } = deps;
  const ids = async (sql: string) => (await deps.query(sql)).map((row) => Object.values(row)[0]);
  const log = async (accountId: string) => (await store.requests.list(accountId, {}, 100)).map((r) => r.id);
  return {
    deliveries: await ids("SELECT id FROM deliveries ORDER BY id"),
    events: await ids("SELECT id FROM events ORDER BY id"),
    requests: [...(await log("acc_day")), ...(await log("acc_week"))].sort(),
    usageHours: (await store.requests.usage(null, 0, Number.MAX_SAFE_INTEGER)).length,
    eventHours: (await store.overview.eventsSince([0]))[0]!.received,
    sessions: await ids("SELECT token_hash FROM sessions ORDER BY token_hash"),
    signIns: await ids("SELECT key FROM sign_in_counts ORDER BY key"),
    operatorSessions: await ids("SELECT token_hash FROM operator_sessions ORDER BY token_hash"),
    onboardings: await ids("SELECT id FROM onboardings ORDER BY id"),
    secrets: await ids("SELECT id FROM onboardings WHERE code_enc IS NOT NULL ORDER BY id"),
    recoveries: await ids("SELECT id FROM recoveries ORDER BY id"),
    audit: await ids("SELECT id FROM audit_log ORDER BY id"),
  };
}

/** What leftOver gives once every policy ran at `now` over seed's rows. */
export const KEPT = {
  deliveries: ["keep_dlv_2", "keep_dlv_3"],
  events: ["keep_evt_2", "keep_evt_3"],
  requests: ["keep_req_2", "keep_req_3"],
  // One hour each of the six records' but the oldest.
  usageHours: 5,
  // The later of the two hours' counts.
  eventHours: 2,
  sessions: ["keep_session"],
  signIns: ["keep"],
  operatorSessions: ["keep_operator_session"],
  onboardings: ["keep_sgn_2", "keep_sgn_3"],
  secrets: ["keep_sgn_2"],
  recoveries: ["keep_rcv_2", "keep_rcv_3"],
  audit: ["keep_aud_2"],
};
