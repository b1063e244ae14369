import { afterEach, describe, expect, test } from "bun:test";
import { createSealer } from "../../src/crypto/sealer.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { COUNT_CHUNK, LAST_SUCCESS_RESOLUTION_MS } from "../../src/store/sqlite/webhooks.ts";
import type { WebhookStore } from "../../src/store/webhooks.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { FAILURE_RULES } from "../../src/webhooks/outcome.ts";
import { sqliteTestDeps } from "../support/harness.ts";
import { databaseBefore } from "../support/old-database.ts";
import { deliveryRow, endpointRow, eventRow, firstAttempt } from "../support/queue-rows.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function storeWithEndpoint() {
  const deps = await sqliteTestDeps();
  cleanups.push(deps.cleanup);
  const now = deps.clock.now();
  const accountId = "acc_store_test";
  await deps.store.directory.createAccount({ id: accountId, name: "Store test", email: "s@example.com", billingStatus: "active", retention: "24h", maxNumbers: null, createdAt: now });
  const endpoint = endpointRow("ep_store_test", accountId, now);
  await deps.store.webhooks.createEndpoint(endpoint);
  return { deps, hooks: deps.store.webhooks, endpoint };
}

type Setup = Awaited<ReturnType<typeof storeWithEndpoint>>;
type Completion = Parameters<WebhookStore["completeAttempt"]>[0];

/** Stores one delivery due at `at`, leased to this process until `leaseUntil` when given (as a line stores it). */
async function store({ deps, hooks, endpoint }: Setup, at: number, leaseUntil?: number): Promise<string> {
  const event = eventRow(newEventId(deps.random, at), endpoint.accountId, at);
  const delivery = deliveryRow(newDeliveryId(deps.random, at), event, endpoint.id, at, leaseUntil);
  await hooks.enqueue([event], [delivery]);
  return delivery.id;
}

/** Stores one delivery leased to this process at `at`, then records one attempt of it answered `status`. */
async function attemptAt(setup: Setup, at: number, status: number, result: Pick<Completion, "next" | "effect">) {
  const { hooks, endpoint } = setup;
  const deliveryId = await store(setup, at, at + 60_000);
  await hooks.completeAttempt(firstAttempt(deliveryId, endpoint.id, at, status, result));
}
const succeeded = { next: { status: "succeeded" }, effect: "success" } as const;
const failed = (at: number) => ({ next: { status: "pending", nextAttemptAt: at + 5_000 }, effect: "failure" }) as const;

describe("the queue's claim in the SQLite store", () => {
  test("an endpoint's due deliveries are read in index order, never sorted: a claim costs the same whatever the backlog", async () => {
    const { deps } = await storeWithEndpoint();
    const statements = (deps.store.webhooks as unknown as { stmt: Record<string, { toString(): string }> }).stmt;
    const claimSql = statements.dueOfEndpoint!.toString();
    expect(claimSql).toContain("ORDER BY d.next_attempt_at");
    const plan = deps.store.db.$client.query(`EXPLAIN QUERY PLAN ${claimSql}`).all() as { detail: string }[];
    expect(plan.map((row) => row.detail)).toContainEqual(expect.stringContaining("USING INDEX deliveries_due"));
    expect(plan.map((row) => row.detail).filter((detail) => detail.includes("TEMP B-TREE"))).toEqual([]);
  });
});

describe("a claim's bodies in the SQLite store", () => {
  test("a claim stops before its bodies pass maxBytes (the first always goes), and an event's deliveries share one copy of its body", async () => {
    const { deps, hooks, endpoint } = await storeWithEndpoint();
    const at = deps.clock.now();
    const second = endpointRow("ep_store_test_2", endpoint.accountId, at);
    await hooks.createEndpoint(second);
    // Three events of 1,000 bytes, each due to both endpoints.
    const events = [1, 2, 3].map((i) => eventRow(newEventId(deps.random, at + i), endpoint.accountId, at + i, new Uint8Array(1000).fill(i)));
    await hooks.enqueue(events, events.flatMap((e, i) => [endpoint.id, second.id].map((to) => deliveryRow(newDeliveryId(deps.random, at + i), e, to, at + i))));
    const claim = (maxBytes: number) => hooks.claimDue(at + 10, { leaseId: `lease_${maxBytes}`, limit: 10, perEndpoint: 10, leaseMs: 70_000, maxBytes });

    expect(await claim(2500)).toHaveLength(2);
    expect(await claim(10)).toHaveLength(1);
    const rest = await claim(Number.POSITIVE_INFINITY);
    expect(rest).toHaveLength(3);
    const shared = rest.filter((c) => rest.some((other) => other !== c && other.delivery.eventId === c.delivery.eventId));
    expect(shared).toHaveLength(2);
    expect(shared[0]!.body).toBe(shared[1]!.body!);
    expect(shared[0]!.body).toEqual(new Uint8Array(1000).fill(shared[0]!.body![0]!));
  });
});

describe("leases in the SQLite store", () => {
  const claim = (hooks: WebhookStore, now: number) => hooks.claimDue(now, { leaseId: `lease_${now}`, limit: 10, perEndpoint: 10, leaseMs: 70_000, maxBytes: Number.POSITIVE_INFINITY }).then((all) => all.map((c) => c.delivery.id));

  test("a delivery stored leased stays out of the due index; a claim takes it only once its lease has run out with no attempt recorded", async () => {
    const setup = await storeWithEndpoint();
    const { deps, hooks } = setup;
    const t = deps.clock.now();
    const leased = await store(setup, t, t + 70_000);
    const due = await store(setup, t);
    const inDueIndex = () => (deps.store.db.$client.query("SELECT id FROM deliveries INDEXED BY deliveries_due WHERE status = 'pending' AND lease_until IS NULL").all() as { id: string }[]).map((row) => row.id);
    expect(inDueIndex()).toEqual([due]);
    expect(await hooks.pendingCount()).toBe(2);

    expect(await claim(hooks, t + 1)).toEqual([due]);
    expect(inDueIndex()).toEqual([]);
    expect(await claim(hooks, t + 69_999)).toEqual([]);
    // Both leases ran out (their attempts crashed, say): both deliveries are due again.
    expect((await claim(hooks, t + 71_000)).sort()).toEqual([leased, due].sort());
    expect(await hooks.pendingCount()).toBe(2);
  });

  test("an attempt's record is kept only under the lease that holds the delivery: a holder whose lease ran out and was claimed again changes nothing", async () => {
    const setup = await storeWithEndpoint();
    const { deps, hooks, endpoint } = setup;
    const t = deps.clock.now();
    const id = await store(setup, t, t + 70_000);
    // The first holder stalls past its lease; a claim leases the delivery anew.
    const [reclaimed] = await hooks.claimDue(t + 71_000, { leaseId: "lease_new", limit: 10, perEndpoint: 10, leaseMs: 70_000, maxBytes: Number.POSITIVE_INFINITY });
    expect(reclaimed).toMatchObject({ leaseId: "lease_new", delivery: { id } });
    // The stale holder's answer (a 500) comes in late: nothing of it is recorded.
    const stale = await hooks.completeAttempt(firstAttempt(id, endpoint.id, t + 72_000, 500, failed(t + 72_000)));
    expect(stale).toEqual({ consecutiveFailures: 0, warned: false, disabled: null });
    expect(await hooks.attempts(id)).toEqual([]);
    expect(await hooks.delivery(id)).toMatchObject({ status: "pending", attemptCount: 0 });
    expect((await hooks.endpoint(endpoint.id))?.consecutiveFailures).toBe(0);
    // The new holder's success is.
    await hooks.completeAttempt(firstAttempt(id, endpoint.id, t + 72_001, 200, succeeded, "lease_new"));
    expect(await hooks.delivery(id)).toMatchObject({ status: "succeeded", attemptCount: 1 });
    expect(await hooks.attempts(id)).toHaveLength(1);
  });
});

describe("endpoint health in the SQLite store", () => {
  test(`last_success_at is kept to ${LAST_SUCCESS_RESOLUTION_MS} ms, but a success after a failure is always recorded`, async () => {
    const setup = await storeWithEndpoint();
    const { hooks, endpoint } = setup;
    const t = setup.deps.clock.now();
    await attemptAt(setup, t, 200, succeeded);
    expect((await hooks.endpoint(endpoint.id))?.lastSuccessAt).toBe(t);
    await attemptAt(setup, t + LAST_SUCCESS_RESOLUTION_MS - 1, 200, succeeded);
    expect((await hooks.endpoint(endpoint.id))?.lastSuccessAt).toBe(t);
    await attemptAt(setup, t + LAST_SUCCESS_RESOLUTION_MS, 200, succeeded);
    expect((await hooks.endpoint(endpoint.id))?.lastSuccessAt).toBe(t + LAST_SUCCESS_RESOLUTION_MS);

    await attemptAt(setup, t + LAST_SUCCESS_RESOLUTION_MS + 1, 500, failed(t));
    expect((await hooks.endpoint(endpoint.id))?.consecutiveFailures).toBe(1);
    await attemptAt(setup, t + LAST_SUCCESS_RESOLUTION_MS + 2, 200, succeeded);
    expect(await hooks.endpoint(endpoint.id)).toMatchObject({ consecutiveFailures: 0, lastSuccessAt: t + LAST_SUCCESS_RESOLUTION_MS + 2 });
  });

  test("the 24-hour quiet window is widened by that precision, so an endpoint is never disabled early", async () => {
    const setup = await storeWithEndpoint();
    const { hooks, endpoint } = setup;
    const t = setup.deps.clock.now();
    await attemptAt(setup, t, 200, succeeded);
    for (let n = 1; n < FAILURE_RULES.disableAt; n++) await attemptAt(setup, t + n, 500, failed(t));
    const windowEnd = t + FAILURE_RULES.quietMs + LAST_SUCCESS_RESOLUTION_MS;
    await attemptAt(setup, windowEnd - 1, 500, failed(t));
    expect(await hooks.endpoint(endpoint.id)).toMatchObject({ enabled: true, consecutiveFailures: FAILURE_RULES.disableAt });
    await attemptAt(setup, windowEnd, 500, failed(t));
    expect(await hooks.endpoint(endpoint.id)).toMatchObject({ enabled: false, disabledReason: "consecutive_failures" });
  });

  test("what an attempt reads of its endpoint follows every change: update, disable by a 410, deletion", async () => {
    const setup = await storeWithEndpoint();
    const { hooks, endpoint } = setup;
    expect(await hooks.deliveryEndpoint(endpoint.id)).toMatchObject({ url: endpoint.url, enabled: true, secret: endpoint.secret });
    const secret = "whsec_bmV3c2VjcmV0bmV3c2VjcmV0bmV3c2VjcmV0";
    await hooks.updateEndpoint(endpoint.id, { url: "https://receiver.example/moved", secret, updatedAt: setup.deps.clock.now() });
    expect(await hooks.deliveryEndpoint(endpoint.id)).toMatchObject({ url: "https://receiver.example/moved", secret });

    await attemptAt(setup, setup.deps.clock.now(), 410, { next: { status: "parked", reason: "gone" }, effect: "gone" });
    expect((await hooks.deliveryEndpoint(endpoint.id))?.enabled).toBe(false);

    await hooks.deleteEndpoint(endpoint.id);
    expect(await hooks.deliveryEndpoint(endpoint.id)).toBeUndefined();
  });
});

describe("deliveries listed by status in the SQLite store", () => {
  test("pending ones (waiting or leased) and parked ones, newest first and paged, each read through an index that holds only them", async () => {
    const setup = await storeWithEndpoint();
    const { deps, hooks, endpoint } = setup;
    const at = deps.clock.now();
    const leased = await store(setup, at + 1, at + 60_000);
    const due = await store(setup, at + 2);
    const retrying = await store(setup, at + 3, at + 60_000);
    await hooks.completeAttempt(firstAttempt(retrying, endpoint.id, at + 3, 500, failed(at + 3)));
    const leasedToo = await store(setup, at + 4, at + 60_000);
    await attemptAt(setup, at + 5, 200, succeeded);
    await attemptAt(setup, at + 6, 410, { next: { status: "parked", reason: "gone" }, effect: "gone" });
    const list = (status: "pending" | "parked" | "succeeded" | undefined, limit = 10, before?: { createdAt: number; id: string }) =>
      hooks.deliveries({ accountId: endpoint.accountId, endpointId: endpoint.id, status, limit, before }).then((all) => all.map((d) => d.id));

    expect(await list("pending")).toEqual([leasedToo, retrying, due, leased]);
    expect(await list("pending", 2)).toEqual([leasedToo, retrying]);
    expect(await list("pending", 2, { createdAt: at + 3, id: retrying })).toEqual([due, leased]);
    expect(await list("parked")).toHaveLength(1);
    expect(await list("succeeded")).toHaveLength(1);
    expect(await list(undefined)).toHaveLength(6);

    const pages = (hooks as unknown as { pages: Record<string, { toString(): string }[]> }).pages;
    const plan = (statement: { toString(): string }) => (deps.store.db.$client.query(`EXPLAIN QUERY PLAN ${statement.toString()}`).all() as { detail: string }[]).map((row) => row.detail).join("\n");
    const [waiting, leases] = pages.pending!.map(plan);
    expect(plan(pages.parked![0]!)).toContain("USING INDEX deliveries_parked");
    expect(waiting).toContain("USING INDEX deliveries_waiting");
    expect(leases).toContain("USING INDEX deliveries_lease");
  });
});

/** Runs `work`, counting the turns of the event loop that other work had meanwhile. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = () => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const result = await work();
  running = false;
  return { result, turns };
}

describe("long deletions in the SQLite store work in batches, letting the event loop run between them", () => {
  async function withDelivered(n: number) {
    const setup = await storeWithEndpoint();
    const at = setup.deps.clock.now();
    for (let i = 0; i < n; i++) await attemptAt(setup, at + i, 200, succeeded);
    const count = (table: string) => (setup.deps.store.db.$client.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { ...setup, at, rowsLeft: () => [count("deliveries"), count("attempts"), count("events")] };
  }

  test("the retention purge", async () => {
    const { hooks, at, rowsLeft } = await withDelivered(250);
    const { result, turns } = await turnsDuring(() => hooks.purgeExpired(at + 25 * 3_600_000, { "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 }));
    expect(result).toEqual({ deliveries: 250, events: 250 });
    // Batches of 100, 100 and 50: the other work ran between them.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(rowsLeft()).toEqual([0, 0, 0]);
  });

  test("deleting an endpoint, with its deliveries and their events; nothing is sent to it meanwhile", async () => {
    const { hooks, endpoint, rowsLeft } = await withDelivered(250);
    let meanwhile: unknown;
    const { result, turns } = await turnsDuring(async () => {
      const deleting = hooks.deleteEndpoint(endpoint.id);
      // What an attempt starting while the batches run reads of its endpoint.
      meanwhile = await hooks.deliveryEndpoint(endpoint.id);
      return deleting;
    });
    expect(meanwhile).toMatchObject({ enabled: false });
    expect(result).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(rowsLeft()).toEqual([0, 0, 0]);
    expect(await hooks.endpoint(endpoint.id)).toBeUndefined();
  });
});

describe("the pending count in the SQLite store", () => {
  test("a backlog of due deliveries is counted chunk by chunk, letting the event loop run between chunks; leased ones count, ended ones do not", async () => {
    const setup = await storeWithEndpoint();
    const { deps, hooks, endpoint } = setup;
    const at = deps.clock.now();
    const other = endpointRow("ep_store_test_2", endpoint.accountId, at);
    await hooks.createEndpoint(other);
    const event = eventRow(newEventId(deps.random, at), endpoint.accountId, at);
    await hooks.enqueue([event], []);
    // Written by SQL, as a long outage leaves them. Runs of deliveries share an endpoint and a due
    // time, so chunks end inside runs of equal index keys.
    const backlog = (endpointId: string, n: number) => deps.store.db.$client.query(`WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < $n)
      INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, next_attempt_at, created_at, updated_at)
      SELECT $endpoint || '_' || n, $account, $endpoint, $event, 'pending', $at + n % 3, $at, $at FROM i`)
      .run({ n, endpoint: endpointId, account: endpoint.accountId, event: event.id, at });
    backlog(endpoint.id, COUNT_CHUNK + 7);
    backlog(other.id, COUNT_CHUNK - 1);
    await store(setup, at, at + 60_000);
    await attemptAt(setup, at, 200, succeeded);

    const { result, turns } = await turnsDuring(() => hooks.pendingCount());
    expect(result).toBe(2 * COUNT_CHUNK + 7);
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});

describe("hourly stats in the SQLite store", () => {
  const HOUR = 3_600_000;
  const parks = { next: { status: "parked", reason: "gone" }, effect: "gone" } as const;
  const counts = (stats: { succeeded: number; failed: number; parked: number }[]) => stats.map((s) => [s.succeeded, s.failed, s.parked]);

  test("each attempt and park is counted in its hour as it is recorded; hours wholly past the account's retention are purged", async () => {
    const setup = await storeWithEndpoint();
    const { deps, hooks, endpoint } = setup;
    const start = Math.floor(deps.clock.now() / HOUR) * HOUR;
    await attemptAt(setup, start + 10, 200, succeeded);
    await attemptAt(setup, start + 20, 500, failed(start + 20));
    await attemptAt(setup, start + HOUR + 5, 410, parks);
    // A delivery parked without an attempt (its endpoint was disabled) counts only as parked.
    const unattempted = await store(setup, start + HOUR + 6, start + HOUR + 60_000);
    await hooks.completeAttempt({ ...firstAttempt(unattempted, endpoint.id, start + HOUR + 7), attempt: null, next: { status: "parked", reason: "endpoint_disabled" }, effect: "none" });
    // Recorded in one commit: counted together.
    await Promise.all([1, 2, 3].map((i) => attemptAt(setup, start + 2 * HOUR + i, i === 3 ? 502 : 200, i === 3 ? failed(start + 2 * HOUR) : succeeded)));
    const now = start + 3 * HOUR + 1;
    expect(counts(await hooks.hourlyStats(endpoint.id, start, now))).toEqual([[1, 1, 0], [0, 1, 2], [2, 1, 0], [0, 0, 0]]);

    // The account keeps 24 hours: the first hour goes once all of it is older than that.
    await hooks.purgeExpired(start + 25 * HOUR - 1, { "24h": 24 * HOUR, "7d": 7 * 24 * HOUR });
    expect(counts(await hooks.hourlyStats(endpoint.id, start, now))).toEqual([[1, 1, 0], [0, 1, 2], [2, 1, 0], [0, 0, 0]]);
    await hooks.purgeExpired(start + 25 * HOUR, { "24h": 24 * HOUR, "7d": 7 * 24 * HOUR });
    expect(counts(await hooks.hourlyStats(endpoint.id, start, now))).toEqual([[0, 0, 0], [0, 1, 2], [2, 1, 0], [0, 0, 0]]);
  });

  test("a database from before the counters gets them, on upgrade, from the attempts and parked deliveries it holds", async () => {
    const setup = await storeWithEndpoint();
    const { deps, hooks, endpoint } = setup;
    const start = Math.floor(deps.clock.now() / HOUR) * HOUR;
    await attemptAt(setup, start + 10, 200, succeeded);
    await attemptAt(setup, start + HOUR + 20, 503, failed(start + HOUR + 20));
    await attemptAt(setup, start + HOUR + 30, 410, parks);
    const expected = await hooks.hourlyStats(endpoint.id, start, start + HOUR);
    expect(counts(expected)).toEqual([[1, 0, 0], [0, 2, 1]]);
    deps.store.close();

    // The same rows in a database of the build before the counters.
    const oldPath = `${deps.dbPath}.old`;
    const old = databaseBefore(oldPath, "0003_endpoint_hours");
    old.run(`ATTACH DATABASE '${deps.dbPath}' AS current`);
    for (const table of ["accounts", "endpoints", "events", "deliveries", "attempts"]) {
      // The old build's columns only: later migrations added some.
      const columns = old.query<{ name: string }, []>(`PRAGMA main.table_info(${table})`).all().map((c) => c.name).join(", ");
      old.run(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM current.${table}`);
    }
    old.run("DETACH DATABASE current");
    old.close();
    const upgraded = openSqliteStore(oldPath, createSealer(new Uint8Array(32), deps.random));
    expect(await upgraded.webhooks.hourlyStats(endpoint.id, start, start + HOUR)).toEqual(expected);
    upgraded.close();
  });
});
