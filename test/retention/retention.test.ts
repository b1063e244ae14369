// The retention worker (src/retention/, docs/operations.md#retention) over a real store on the
// test backend: each policy removes exactly what is past its window, on the injected clock's
// minute; the metrics and the log say what it did; a failing policy does not stop the others.
import { afterEach, describe, expect, test } from "bun:test";
import { createMetrics } from "../../src/observability/metrics.ts";
import { RETENTION_POLICIES } from "../../src/retention/policies.ts";
import { RETENTION_EVERY_MS, RetentionWorker, type PolicyRun } from "../../src/retention/worker.ts";
import { onSqlite } from "../support/backend.ts";
import { startApp, testDeps } from "../support/harness.ts";
import { KEPT, leftOver, SEEDED_REMOVALS, seed } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A running server on a fresh database (its clock's seconds start when the test says), with seed's rows as of now. */
async function seeded() {
  const deps = await testDeps();
  const { clock } = deps;
  cleanups.push(deps.cleanup);
  const server = startApp(deps);
  cleanups.push(server.stop);
  await seed(deps, clock.now());
  const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
  return { deps, clock, retention: server.app.retention, metrics };
}

const byPolicy = (runs: PolicyRun[]) => Object.fromEntries(runs.map((r) => [r.policy, r.removed]));
const none = Object.fromEntries(RETENTION_POLICIES.map((p) => [p.name, 0]));

test("each policy removes what is past its window and nothing else; the metrics and the log count it", async () => {
  const { deps, retention, metrics } = await seeded();
  expect(byPolicy(await retention.run())).toEqual(SEEDED_REMOVALS);
  expect(await leftOver(deps)).toEqual(KEPT);
  expect(byPolicy(await retention.run())).toEqual(none);

  const text = await metrics();
  for (const [policy, removed] of Object.entries(SEEDED_REMOVALS)) {
    expect(text).toContain(`switchboard_retention_removed_rows_total{policy="${policy}"} ${removed}\n`);
    expect(text).toContain(`switchboard_retention_seconds_count{policy="${policy}"} 2\n`);
  }
  // One line per policy that removed something; none for the run that removed nothing.
  const lines = deps.logger.lines.filter((l) => l.msg === "retention purge");
  const removing = Object.fromEntries(Object.entries(SEEDED_REMOVALS).filter(([, removed]) => removed > 0));
  expect(Object.fromEntries(lines.map((l) => [l.policy, l.removed]))).toEqual(removing);
  expect(lines).toHaveLength(Object.keys(removing).length);
});

test("a row at the edge of its window stays, and goes a millisecond later", async () => {
  const { deps, clock, retention } = await seeded();
  await retention.run();
  clock.advance(1);
  expect(byPolicy(await retention.run())).toEqual({
    webhook_history: 2,
    request_log: 1,
    usage: 1,
    event_counts: 1,
    sessions: 1,
    sign_in_counts: 1,
    operator_sessions: 1,
    onboardings: 1,
    // The week's account's recover is a week from its edge; a running one is never purged.
    recoveries: 0,
    instances: SEEDED_REMOVALS.instances,
    audit_log: 1,
  });
  expect(await leftOver(deps)).toEqual({
    ...KEPT,
    deliveries: ["keep_dlv_3"],
    events: ["keep_evt_3"],
    requests: ["keep_req_3"],
    usageHours: 4,
    eventHours: 0,
    sessions: [],
    signIns: [],
    operatorSessions: [],
    onboardings: ["keep_sgn_3"],
    secrets: [],
    audit: [],
  });
});

test("the server runs the policies at the first second after it starts, then once a minute by its clock", async () => {
  const { deps, clock } = await seeded();
  await clock.second();
  expect(await leftOver(deps)).toEqual(KEPT);
  clock.advance(1);
  await clock.second();
  // Within the minute: the rows at the edge are past it now, but no run came.
  expect((await leftOver(deps)).sessions).toEqual(["keep_session"]);
  clock.advance(RETENTION_EVERY_MS - 1);
  await clock.second();
  expect((await leftOver(deps)).sessions).toEqual([]);
});

test("a failing policy is logged and counted, and the others run", async () => {
  const { deps, retention, metrics } = await seeded();
  // A table the store cannot find: the sessions policy fails as it would on a broken database.
  await deps.query("ALTER TABLE sessions RENAME TO sessions_away");
  expect(byPolicy(await retention.run())).toEqual({ ...SEEDED_REMOVALS, sessions: null });
  await deps.query("ALTER TABLE sessions_away RENAME TO sessions");
  expect(await leftOver(deps)).toEqual({ ...KEPT, sessions: ["keep_session", "session"] });
  const text = await metrics();
  expect(text).toContain('switchboard_retention_failures_total{policy="sessions"} 1\n');
  expect(text).not.toContain('switchboard_retention_failures_total{policy="usage"}');
  expect(deps.logger.lines.filter((l) => l.level === "error")).toEqual([
    expect.objectContaining({ msg: "retention purge failed", policy: "sessions" }),
  ]);
});

describe.skipIf(onSqlite)("on PostgreSQL", () => {
  test("instances purging at once remove every row once, without errors", async () => {
    const deps = await testDeps();
    const { clock } = deps;
    cleanups.push(deps.cleanup);
    await seed(deps, clock.now());
    const worker = (store = deps.store) =>
      new RetentionWorker({ store, clock, logger: deps.logger, metrics: createMetrics(), config: deps.config });
    const runs = await Promise.all([worker().run(), worker(await deps.anotherStore()).run()]);
    // One may find the other purging the webhook history and stop; the next run takes what is left.
    runs.push(await worker().run());
    const total = { ...none };
    for (const run of runs)
      for (const { policy, removed } of run) {
        expect(removed).not.toBeNull();
        total[policy] = (total[policy] ?? 0) + (removed ?? 0);
      }
    expect(total).toEqual(SEEDED_REMOVALS);
    expect(await leftOver(deps)).toEqual(KEPT);
  });
});
