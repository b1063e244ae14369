import { afterEach, describe, expect, test } from "bun:test";
import { createSealer } from "../../src/crypto/sealer.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { COUNT_CHUNK } from "../../src/store/sqlite/queue.ts";
import type { Completion, DeliveryQueue } from "../../src/store/queue.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
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
  await deps.store.directory.createAccount({
    id: accountId,
    name: "Store test",
    email: "s@example.com",
    billingStatus: "active",
    retention: "24h",
    maxNumbers: null,
    createdAt: now,
  });
  const endpoint = endpointRow("ep_store_test", accountId, now);
  await deps.store.endpoints.create(endpoint);
  return { deps, store: deps.store, endpoint };
}

type Setup = Awaited<ReturnType<typeof storeWithEndpoint>>;

/** Stores one delivery due at `at`, leased to this process until `leaseUntil` when given (as a line stores it). */
async function queued({ deps, store, endpoint }: Setup, at: number, leaseUntil?: number): Promise<string> {
  const event = eventRow(newEventId(deps.random, at), endpoint.accountId, at);
  const delivery = deliveryRow(newDeliveryId(deps.random, at), event, endpoint.id, at, leaseUntil);
  await store.queue.enqueue([event], [delivery]);
  return delivery.id;
}

/** Stores one delivery leased to this process at `at`, then records one attempt of it answered `status`. */
async function attemptAt(setup: Setup, at: number, status: number, result: Pick<Completion, "next" | "effect">) {
  const { store, endpoint } = setup;
  const deliveryId = await queued(setup, at, at + 60_000);
  await store.queue.completeAttempt(firstAttempt(deliveryId, endpoint.id, at, status, result));
}
const succeeded = { next: { status: "succeeded" }, effect: "success" } as const;
const failed = (at: number) => ({ next: { status: "pending", nextAttemptAt: at + 5_000 }, effect: "failure" }) as const;

describe("the queue's claim in the SQLite store", () => {
  test("an endpoint's due deliveries are read in index order, never sorted: a claim costs the same whatever the backlog", async () => {
    const { deps } = await storeWithEndpoint();
    const statements = (deps.store.queue as unknown as { stmt: Record<string, { toString(): string }> }).stmt;
    const claimSql = statements.dueOfEndpoint!.toString();
    expect(claimSql).toContain("ORDER BY d.next_attempt_at");
    const plan = deps.store.db.$client.query(`EXPLAIN QUERY PLAN ${claimSql}`).all() as { detail: string }[];
    expect(plan.map((row) => row.detail)).toContainEqual(expect.stringContaining("USING INDEX deliveries_due"));
    expect(plan.map((row) => row.detail).filter((detail) => detail.includes("TEMP B-TREE"))).toEqual([]);
  });
});

describe("leases in the SQLite store", () => {
  const claim = (queue: DeliveryQueue, now: number) =>
    queue
      .claimDue(now, {
        leaseId: `lease_${now}`,
        limit: 10,
        perEndpoint: 10,
        leaseMs: 70_000,
        maxBytes: Number.POSITIVE_INFINITY,
      })
      .then((all) => all.map((c) => c.delivery.id));

  test("a delivery stored leased stays out of the due index; a claim takes it only once its lease has run out with no attempt recorded", async () => {
    const setup = await storeWithEndpoint();
    const { deps, store } = setup;
    const t = deps.clock.now();
    const leased = await queued(setup, t, t + 70_000);
    const due = await queued(setup, t);
    const inDueIndex = () =>
      (
        deps.store.db.$client
          .query("SELECT id FROM deliveries INDEXED BY deliveries_due WHERE status = 'pending' AND lease_until IS NULL")
          .all() as { id: string }[]
      ).map((row) => row.id);
    expect(inDueIndex()).toEqual([due]);
    expect(await store.queue.pendingCount()).toBe(2);

    expect(await claim(store.queue, t + 1)).toEqual([due]);
    expect(inDueIndex()).toEqual([]);
    expect(await claim(store.queue, t + 69_999)).toEqual([]);
    // Both leases ran out (their attempts crashed, say): both deliveries are due again.
    expect((await claim(store.queue, t + 71_000)).sort()).toEqual([leased, due].sort());
    expect(await store.queue.pendingCount()).toBe(2);
  });
});

describe("deliveries listed by status in the SQLite store", () => {
  // What each list returns is in storage-suite.test.ts; here, that SQLite reads each through an index that holds only them.
  test("pending ones (waiting or leased) and parked ones are each read through an index that holds only them", async () => {
    const { deps, store } = await storeWithEndpoint();
    const { pages } = (store.history as unknown as { stmt: { pages: Record<string, { toString(): string }[]> } }).stmt;
    const plan = (statement: { toString(): string }) =>
      (deps.store.db.$client.query(`EXPLAIN QUERY PLAN ${statement.toString()}`).all() as { detail: string }[])
        .map((row) => row.detail)
        .join("\n");
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
    const count = (table: string) =>
      (setup.deps.store.db.$client.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { ...setup, at, rowsLeft: () => [count("deliveries"), count("attempts"), count("events")] };
  }

  test("the retention purge", async () => {
    const { store, at, rowsLeft } = await withDelivered(250);
    const { result, turns } = await turnsDuring(() =>
      store.retention.purgeWebhookHistory(
        at + 25 * 3_600_000,
        { "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 },
        100,
      ),
    );
    expect(result).toEqual({ deliveries: 250, events: 250 });
    // Batches of 100, 100 and 50: the other work ran between them.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(rowsLeft()).toEqual([0, 0, 0]);
  });

  test("deleting an endpoint, with its deliveries and their events; nothing is sent to it meanwhile", async () => {
    const { store, endpoint, rowsLeft } = await withDelivered(250);
    let meanwhile: unknown;
    const { result, turns } = await turnsDuring(async () => {
      const deleting = store.endpoints.delete(endpoint.id);
      // What an attempt starting while the batches run reads of its endpoint.
      meanwhile = await store.endpoints.forDelivery(endpoint.id);
      return deleting;
    });
    expect(meanwhile).toMatchObject({ enabled: false });
    expect(result).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(rowsLeft()).toEqual([0, 0, 0]);
    expect(await store.endpoints.get(endpoint.id)).toBeUndefined();
  });
});

describe("the pending count in the SQLite store", () => {
  test("a backlog of due deliveries is counted chunk by chunk, letting the event loop run between chunks; leased ones count, ended ones do not", async () => {
    const setup = await storeWithEndpoint();
    const { deps, store, endpoint } = setup;
    const at = deps.clock.now();
    const other = endpointRow("ep_store_test_2", endpoint.accountId, at);
    await store.endpoints.create(other);
    const event = eventRow(newEventId(deps.random, at), endpoint.accountId, at);
    await store.queue.enqueue([event], []);
    // Written by SQL, as a long outage leaves them. Runs of deliveries share an endpoint and a due
    // time, so chunks end inside runs of equal index keys.
    const backlog = (endpointId: string, n: number) =>
      deps.store.db.$client
        .query(`WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < $n)
      INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, next_attempt_at, created_at, updated_at)
      SELECT $endpoint || '_' || n, $account, $endpoint, $event, 'pending', $at + n % 3, $at, $at FROM i`)
        .run({ n, endpoint: endpointId, account: endpoint.accountId, event: event.id, at });
    backlog(endpoint.id, COUNT_CHUNK + 7);
    backlog(other.id, COUNT_CHUNK - 1);
    await queued(setup, at, at + 60_000);
    await attemptAt(setup, at, 200, succeeded);

    const { result, turns } = await turnsDuring(() => store.queue.pendingCount());
    expect(result).toBe(2 * COUNT_CHUNK + 7);
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});

describe("hourly stats in the SQLite store", () => {
  const HOUR = 3_600_000;
  const parks = { next: { status: "parked", reason: "gone" }, effect: "gone" } as const;
  const counts = (stats: { succeeded: number; failed: number; parked: number }[]) =>
    stats.map((s) => [s.succeeded, s.failed, s.parked]);

  test("a database from before the counters gets them, on upgrade, from the attempts and parked deliveries it holds", async () => {
    const setup = await storeWithEndpoint();
    const { deps, store, endpoint } = setup;
    const start = Math.floor(deps.clock.now() / HOUR) * HOUR;
    await attemptAt(setup, start + 10, 200, succeeded);
    await attemptAt(setup, start + HOUR + 20, 503, failed(start + HOUR + 20));
    await attemptAt(setup, start + HOUR + 30, 410, parks);
    const expected = await store.history.hourlyStats(endpoint.id, start, start + HOUR);
    expect(counts(expected)).toEqual([
      [1, 0, 0],
      [0, 2, 1],
    ]);
    await deps.store.close();

    // The same rows in a database of the build before the counters.
    const oldPath = `${deps.dbPath}.old`;
    const old = databaseBefore(oldPath, "0003_endpoint_hours");
    old.run(`ATTACH DATABASE '${deps.dbPath}' AS current`);
    for (const table of ["accounts", "endpoints", "events", "deliveries", "attempts"]) {
      // The old build's columns only: later migrations added some.
      const columns = old
        .query<{ name: string }, []>(`PRAGMA main.table_info(${table})`)
        .all()
        .map((c) => c.name)
        .join(", ");
      old.run(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM current.${table}`);
    }
    old.run("DETACH DATABASE current");
    old.close();
    const upgraded = openSqliteStore(oldPath, createSealer(new Uint8Array(32), deps.random));
    expect(await upgraded.history.hourlyStats(endpoint.id, start, start + HOUR)).toEqual(expected);
    await upgraded.close();
  });
});
