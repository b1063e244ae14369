// PostgreSQL's own promises, beyond the storage suite: several instances on one database
import { NO_CAUSE } from "../../src/store/types.ts";
// (docs/operations.md#scale-out), migrations once, and faults. Run in the PostgreSQL pass of `.ci/run`.
import { afterEach, describe, expect, test } from "bun:test";
import { embeddedMigrations } from "../../db/postgres.gen.ts";
import { hashApiKey } from "../../src/accounts/api-key.ts";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { StoreUnavailableError } from "../../src/store/errors.ts";
import { openPostgresStore, type PgStore } from "../../src/store/postgres/store.ts";
import type { Store } from "../../src/store/store.ts";
import type { ClaimedDelivery } from "../../src/store/queue.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { postgresAdmin, postgresUrl, testBackend } from "../support/backend.ts";
import { admin, startApp, testDeps, TEST_APP_SECRET, type TestDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow, firstAttempt } from "../support/queue-rows.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { memoryLogger } from "../../src/observability/logger.ts";
import { eventBody, messageChange, postUpstream, relayApp } from "../webhooks/support.ts";
import { startSimulator } from "../../src/simulator/server.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fresh(env?: Record<string, string>): Promise<TestDeps> {
  const deps = await testDeps({ env });
  cleanups.push(deps.cleanup);
  return deps;
}

/** Waits until `check` holds (at most `withinMs`); returns how long that took. */
async function within(withinMs: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await Bun.sleep(2);
  }
  return performance.now() - start;
}

async function seed(store: Store, at: number) {
  await store.directory.createAccount({
    id: "acc_pg",
    name: "PG",
    email: "pg@example.com",
    billingStatus: "active",
    retention: "24h",
    maxNumbers: null,
    createdAt: at,
  });
}

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: several instances on one database", () => {
  test("claims from two instances at once never give an endpoint more than 10 live leases in total", async () => {
    const deps = await fresh();
    const other = await deps.anotherStore();
    const t = deps.clock.now();
    await seed(deps.store, t);
    const endpoints = ["ep_a", "ep_b", "ep_c"].map((id) => endpointRow(id, "acc_pg", t));
    for (const e of endpoints) await deps.store.endpoints.create(e);
    const events = Array.from({ length: 60 }, (_, i) => eventRow(newEventId(deps.random, t), "acc_pg", t + i));
    await deps.store.queue.enqueue(
      events,
      events.flatMap((e, i) => endpoints.map((ep) => deliveryRow(newDeliveryId(deps.random, t), e, ep.id, t + i))),
    );
    const stores = [deps.store, other];
    let serial = 0;
    const live = async () =>
      (
        await deps.query(`SELECT endpoint_id, COUNT(*) AS n FROM endpoint_slots
      WHERE lease_until > ${t + 1_000} GROUP BY endpoint_id`)
      ).map((r) => r.n as number);
    let delivered = 0;
    let inFlight: { c: ClaimedDelivery; store: Store }[] = [];
    for (let round = 0; round < 40 && delivered < 180; round++) {
      // Twelve claims at once, alternately from each instance, each asking for up to 10 per endpoint.
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          stores[i % 2]!.queue.claimDue(t + 1_000, {
            leaseId: `lease_${++serial}`,
            limit: 64,
            perEndpoint: 10,
            leaseMs: 70_000,
            maxBytes: Number.POSITIVE_INFINITY,
          }),
        ),
      );
      const claimed = claims.flatMap((batch, i) => batch.map((c) => ({ c, store: stores[i % 2]! })));
      expect(Math.max(0, ...(await live()))).toBeLessThanOrEqual(10);
      inFlight.push(...claimed);
      expect(new Set(inFlight.map(({ c }) => c.delivery.id)).size).toBe(inFlight.length);
      // Some complete, each on the instance that holds it, freeing slots for the next round; every
      // other round the rest stay in flight.
      const finishing = inFlight.filter((_, i) => round % 2 === 1 || i % 3 !== 0);
      inFlight = inFlight.filter((f) => !finishing.includes(f));
      await Promise.all(
        finishing.map(({ c, store }) =>
          store.queue.completeAttempt(firstAttempt(c.delivery.id, c.endpoint.id, t + 1_000, 200, undefined, c.leaseId)),
        ),
      );
      delivered += finishing.length;
    }
    expect(delivered).toBe(180);
  });

  test("a change made through one instance holds on the other within 1 s: a key revoked, a WABA's token, an endpoint created", async () => {
    const deps = await fresh();
    const other = await deps.anotherStore();
    const t = deps.clock.now();
    await seed(deps.store, t);
    const keyHash = hashApiKey(`px_live_${"a".repeat(32)}`);
    await deps.store.directory.createApiKey({
      id: "key_pg",
      accountId: "acc_pg",
      mode: "live",
      name: null,
      prefix: "px_live_aa",
      keyHash,
      createdAt: t,
      revokedAt: null,
    });
    await within(1_000, () => other.directory.apiKeyByHash(keyHash)?.revokedAt === null);
    await deps.store.directory.revokeApiKey("key_pg", t + 1);
    // On the instance that made it: at once.
    expect(deps.store.directory.apiKeyByHash(keyHash)?.revokedAt).toBe(t + 1);
    expect(await within(1_000, () => other.directory.apiKeyByHash(keyHash)?.revokedAt === t + 1)).toBeLessThan(1_000);

    await other.directory.createWaba({
      ...NO_CAUSE,
      wabaId: "3001",
      accountId: "acc_pg",
      accessToken: "tok",
      appSecret: null,
      status: "connected",
      createdAt: t,
      updatedAt: t,
    });
    await other.directory.updateWaba("3001", { accessToken: "tok2", updatedAt: t + 2 });
    await within(1_000, () => deps.store.directory.waba("3001")?.accessToken === "tok2");

    await other.endpoints.create(endpointRow("ep_new", "acc_pg", t));
    await within(1_000, () => deps.store.endpoints.targets("acc_pg").some((e) => e.id === "ep_new"));
    await other.endpoints.update("ep_new", { url: "https://receiver.example/moved", updatedAt: t + 3 });
    await within(
      1_000,
      async () => (await deps.store.endpoints.forDelivery("ep_new"))?.url === "https://receiver.example/moved",
    );
    await other.endpoints.delete("ep_new");
    await within(1_000, () => deps.store.endpoints.targets("acc_pg").length === 0);
  });

  test("a change whose notification was lost is found by refresh(), the backstop called each second", async () => {
    const deps = await fresh();
    const t = deps.clock.now();
    await seed(deps.store, t);
    // Committed without a notification, as when the listening connection was down.
    await deps.query(
      "WITH changed AS (UPDATE accounts SET billing_status = 'suspended' RETURNING id) UPDATE changes SET seq = seq + (SELECT COUNT(*) FROM changed)",
    );
    await Bun.sleep(50);
    expect(deps.store.directory.account("acc_pg")?.billingStatus).toBe("active");
    expect(await deps.store.directory.refresh()).toBe(true);
    expect(deps.store.directory.account("acc_pg")?.billingStatus).toBe("suspended");
    expect(await deps.store.directory.refresh()).toBe(false);
  });

  test("the retention purge run by both instances at once removes everything once, without errors", async () => {
    const deps = await fresh();
    const other = await deps.anotherStore();
    const t = deps.clock.now();
    await seed(deps.store, t);
    const endpoints = ["ep_p1", "ep_p2"].map((id) => endpointRow(id, "acc_pg", t));
    for (const e of endpoints) await deps.store.endpoints.create(e);
    const events = Array.from({ length: 1_500 }, (_, i) => eventRow(newEventId(deps.random, t), "acc_pg", t + i));
    await deps.store.queue.enqueue(
      events,
      events.flatMap((e, i) => endpoints.map((ep) => deliveryRow(newDeliveryId(deps.random, t), e, ep.id, t + i))),
    );
    const retention = { "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 };
    const later = t + 30 * 3_600_000;
    const [a, b] = await Promise.all([
      deps.store.retention.purgeWebhookHistory(later, retention, 1_000),
      other.retention.purgeWebhookHistory(later, retention, 1_000),
    ]);
    // One may find the other purging and stop; the next run, a minute later, purges what is left.
    const rest = await deps.store.retention.purgeWebhookHistory(later, retention, 1_000);
    expect(a.deliveries + b.deliveries + rest.deliveries).toBe(3_000);
    expect(a.events + b.events + rest.events).toBe(1_500);
    expect(await deps.query("SELECT (SELECT COUNT(*) FROM deliveries) + (SELECT COUNT(*) FROM events) AS n")).toEqual([
      { n: 0 },
    ]);
  });

  test("two instances starting together on an empty database migrate it once", async () => {
    const name = `sb_test_${process.pid}_empty_${Date.now()}`;
    await postgresAdmin().unsafe(`CREATE DATABASE ${name}`);
    cleanups.push(() => postgresAdmin().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    const sealer = createSealer(new Uint8Array(32).fill(3), cryptoRandom);
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(postgresUrl(name), sealer, { max: 2 })));
    cleanups.push(() => Promise.all(stores.map((s) => s.close())));
    const [applied] = await stores[0]!.db.$client.unsafe("SELECT COUNT(*)::int AS n FROM drizzle.__drizzle_migrations");
    expect(applied.n).toBe(embeddedMigrations.length);
    await seed(stores[1]!, 1);
    await within(1_000, () => stores[2]!.directory.account("acc_pg") !== undefined);
  });
});

describe.skipIf(testBackend() !== "postgres")("PostgreSQL unreachable", () => {
  /** A store that reaches the test's database through a relay the test can cut. */
  async function behindRelay(deps: TestDeps): Promise<{ store: PgStore; relay: TcpProxy }> {
    const target = new URL(deps.databaseUrl);
    const relay = startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => relay.stop());
    const url = new URL(deps.databaseUrl);
    url.port = String(relay.port);
    const store = await openPostgresStore(url.toString(), createSealer(deps.config.encryptionKey!, deps.random), {
      max: 2,
    });
    cleanups.push(() => store.close());
    return { store, relay };
  }

  test("operations reject with StoreUnavailableError, healthy() says false at once; all recovers by itself, LISTEN included", async () => {
    const deps = await fresh();
    const t = deps.clock.now();
    await seed(deps.store, t);
    const { store, relay } = await behindRelay(deps);
    expect(await store.healthy()).toBe(true);
    const woken: number[] = [];
    store.queue.onNewWork(() => woken.push(1));

    relay.cut();
    const started = performance.now();
    expect(await store.healthy()).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_100);
    const event = eventRow(newEventId(deps.random, t), "acc_pg", t);
    await expect(store.queue.enqueue([event], [])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.directory.updateAccount("acc_pg", { name: "x" })).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.users.byEmail("a@example.com")).rejects.toBeInstanceOf(StoreUnavailableError);
    // Reads of the directory keep answering from memory.
    expect(store.directory.account("acc_pg")?.name).toBe("PG");
    // A change made meanwhile on an instance that can reach the database.
    await deps.store.directory.updateAccount("acc_pg", { billingStatus: "overdue" });

    relay.restore();
    await within(5_000, () => store.healthy());
    await store.queue.enqueue([event], []);
    expect(await deps.query(`SELECT COUNT(*) AS n FROM events WHERE id = '${event.id}'`)).toEqual([{ n: 1 }]);
    // The listening connection came back, and what changed while it was away was read again.
    await within(5_000, () => store.directory.account("acc_pg")?.billingStatus === "overdue");
    await deps.store.directory.updateAccount("acc_pg", { billingStatus: "active" });
    await within(1_000, () => store.directory.account("acc_pg")?.billingStatus === "active");
    const before = woken.length;
    const ep = endpointRow("ep_pg", "acc_pg", t);
    await deps.store.endpoints.create(ep);
    const next = eventRow(newEventId(deps.random, t), "acc_pg", t);
    await deps.store.queue.enqueue([next], [deliveryRow(newDeliveryId(deps.random, t), next, ep.id, t)]);
    await within(1_000, () => woken.length > before);
  });

  test("ingress, the operator API and /healthz answer 503 (nothing acknowledged) while proxied calls go on from memory, until the database is back", async () => {
    const sim = startSimulator();
    cleanups.push(() => sim.stop());
    const deps = await testDeps({ env: { UPSTREAM_URL: sim.url } });
    cleanups.push(deps.cleanup);
    const { store, relay } = await behindRelay(deps);
    await deps.store.close();
    deps.store = store;
    const app = startApp(deps);
    cleanups.push(() => app.stop());
    const created = (await (
      await admin(app.url, "POST", "/admin/accounts", { name: "A", email: "a@example.com" })
    ).json()) as { id: string };
    sim.addWaba({ wabaId: "4001", accessToken: "tok", appSecret: TEST_APP_SECRET });
    sim.addNumber("4001", { phoneNumberId: "4002", throughputLevel: "STANDARD" });
    await admin(app.url, "POST", `/admin/accounts/${created.id}/wabas`, { waba_id: "4001", access_token: "tok" });
    await admin(app.url, "POST", `/admin/accounts/${created.id}/numbers`, {
      phone_number_id: "4002",
      waba_id: "4001",
      kind: "embedded",
    });
    const { key } = (await (
      await admin(app.url, "POST", `/admin/accounts/${created.id}/api-keys`, { mode: "live" })
    ).json()) as { key: string };
    const send = () =>
      fetch(`${app.url}/v21.0/4002/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "hi" } }),
      });
    await store.endpoints.create(endpointRow("ep_ingress", created.id, deps.clock.now()));
    const body = JSON.stringify({
      object: "whatsapp_business_account",
      entry: [{ id: "4001", changes: [{ field: "messages", value: {} }] }],
    });
    const post = () =>
      fetch(`${app.url}/webhooks/upstream`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-hub-signature-256": hubSignature(TEST_APP_SECRET, new TextEncoder().encode(body)),
        },
        body,
      });
    expect((await post()).status).toBe(200);

    relay.cut();
    expect((await post()).status).toBe(503);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(503);
    const operator = await admin(app.url, "GET", "/admin/numbers/4002");
    expect(operator.status).toBe(503);
    expect(await operator.json()).toMatchObject({ error: { type: "UnavailableException", code: "unavailable" } });
    const sent = await send();
    expect(sent.status).toBe(200);
    expect(sent.headers.get("ratelimit-limit")).toBe("80");
    relay.restore();
    await within(5_000, async () => (await fetch(`${app.url}/healthz`)).status === 200);
    expect((await post()).status).toBe(200);
    expect(await deps.query("SELECT COUNT(*) AS n FROM events")).toEqual([{ n: 2 }]);
  });
});

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: two relays on one database", () => {
  test("events posted alternately to both are each delivered once per endpoint, with never more than 10 in flight to it", async () => {
    const first = await relayApp();
    cleanups.push(() => first.close());
    // A second instance: its own store, metrics and logger over the same database and config.
    const deps2 = {
      ...first.deps,
      store: await first.deps.anotherStore(),
      metrics: createMetrics(),
      logger: memoryLogger(),
    };
    const second = startApp(deps2);
    cleanups.push(() => second.stop());
    const a = await first.account();
    let open = 0;
    let most = 0;
    const rx = first.receiver(async () => {
      most = Math.max(most, ++open);
      await Bun.sleep(2);
      open--;
      return new Response("ok");
    });
    const other = first.receiver();
    await a.endpoint(rx.url);
    await a.endpoint(other.url);
    const posts = Array.from({ length: 120 }, (_, i) =>
      eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!, `m${i}`)] }]),
    );
    // The second instance learns of the endpoints from the first's changes, as it would in production.
    await within(1_000, () => deps2.store.endpoints.targets(a.id).length === 2);
    const answers = await Promise.all(posts.map((body, i) => postUpstream(i % 2 === 0 ? first.url : second.url, body)));
    expect(answers.map((r) => r.status)).toEqual(posts.map(() => 200));
    await within(30_000, () => rx.received.length >= 120 && other.received.length >= 120);
    await Bun.sleep(100);
    for (const got of [rx, other]) {
      const ids = got.received.map((r) => r.headers["webhook-id"]);
      expect(new Set(ids).size).toBe(120);
      expect(ids).toHaveLength(120);
    }
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(10);
  });
});

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: instances that stop beating", () => {
  /** An account with one endpoint and `n` due deliveries to it, on `deps`'s database. */
  async function queued(deps: TestDeps, n: number) {
    const t = deps.clock.now();
    await seed(deps.store, t);
    const endpoint = endpointRow("ep_pg", "acc_pg", t);
    await deps.store.endpoints.create(endpoint);
    const events = Array.from({ length: n }, (_, i) => eventRow(newEventId(deps.random, t), "acc_pg", t + i));
    await deps.store.queue.enqueue(
      events,
      events.map((e, i) => deliveryRow(newDeliveryId(deps.random, t), e, endpoint.id, t + i)),
    );
    const claim = (store: Store, at: number, leaseId: string, limit = 10) =>
      store.queue.claimDue(at, {
        leaseId,
        limit,
        perEndpoint: 10,
        leaseMs: 70_000,
        maxBytes: Number.POSITIVE_INFINITY,
      });
    return { t, endpoint, claim };
  }

  test("its leases are taken back at once, fenced on the beats seen: another instance claims its delivery under a new lease, and its late completion records nothing", async () => {
    const deps = await fresh();
    const stopping = await deps.anotherStore();
    const { t, endpoint, claim } = await queued(deps, 2);
    await stopping.instances.beat(t);
    const [held] = await claim(stopping, t + 10, "lease_stopping", 1);
    const seen = (await deps.store.instances.beat(t + 10)).others;
    expect(seen).toEqual([{ id: stopping.instances.self, startedAt: t, beatAt: t, beats: 1 }]);
    // It beat since it was seen: it is alive, and nothing is taken back.
    await stopping.instances.beat(t + 1_000);
    expect(await deps.store.instances.takeBack([{ id: stopping.instances.self, beats: 1 }])).toBe(0);
    expect((await claim(deps.store, t + 1_010, "lease_early")).map((c) => c.delivery.id)).not.toContain(
      held!.delivery.id,
    );
    // Then it stops beating, and is taken for dead: its one lease is taken back.
    expect(await deps.store.instances.takeBack([{ id: stopping.instances.self, beats: 2 }])).toBe(1);
    const [again] = await claim(deps.store, t + 6_000, "lease_again");
    expect(again).toMatchObject({ leaseId: "lease_again", delivery: { id: held!.delivery.id, attemptCount: 0 } });
    // It was only slow: its completion comes late, and records nothing.
    expect(
      await stopping.queue.completeAttempt(
        firstAttempt(held!.delivery.id, endpoint.id, t + 7_000, 200, undefined, held!.leaseId),
      ),
    ).toEqual({ consecutiveFailures: 0, warned: false, disabled: null });
    await deps.store.queue.completeAttempt(
      firstAttempt(held!.delivery.id, endpoint.id, t + 7_001, 200, undefined, "lease_again"),
    );
    expect(await deps.store.history.attempts(held!.delivery.id)).toMatchObject([{ at: t + 7_001 }]);
    expect(await deps.store.history.delivery(held!.delivery.id)).toMatchObject({
      status: "succeeded",
      attemptCount: 1,
    });
    // Its next beat tells it, and registers it again.
    expect(await stopping.instances.beat(t + 8_000)).toMatchObject({ takenForDead: true, shared: false });
    expect((await deps.store.instances.beat(t + 8_000)).others.map((o) => o.id)).toEqual([stopping.instances.self]);
  });

  test("a restarted instance takes back only its own earlier leases, not another live instance's", async () => {
    const deps = await fresh({ INSTANCE_ID: "inst_restarting" });
    const other = await openPostgresStore(deps.databaseUrl, createSealer(deps.config.encryptionKey!, deps.random), {
      max: 2,
      instance: "inst_other",
    });
    cleanups.push(() => other.close());
    const { t, claim } = await queued(deps, 2);
    const [mine] = await claim(deps.store, t + 10, "lease_mine", 1);
    const [theirs] = await claim(other, t + 10, "lease_theirs", 1);
    await deps.reopenStore();
    await deps.store.queue.recoverLeases(t + 20);
    expect((await claim(deps.store, t + 20, "lease_after")).map((c) => c.delivery.id)).toEqual([mine!.delivery.id]);
    expect(
      await deps.query(
        `SELECT delivery_id, lease_id, holder FROM endpoint_slots WHERE delivery_id IS NOT NULL ORDER BY lease_id`,
      ),
    ).toEqual([
      { delivery_id: mine!.delivery.id, lease_id: "lease_after", holder: "inst_restarting" },
      { delivery_id: theirs!.delivery.id, lease_id: "lease_theirs", holder: "inst_other" },
    ]);
  });

  test("two processes given one instance id: each one's beats tell it", async () => {
    const deps = await fresh({ INSTANCE_ID: "inst_twin" });
    const twin = await deps.anotherStore();
    const t = deps.clock.now();
    expect(await deps.store.instances.beat(t)).toMatchObject({ shared: false });
    expect(await twin.instances.beat(t)).toMatchObject({ shared: false });
    expect(await deps.store.instances.beat(t + 1_000)).toMatchObject({ shared: true });
    expect(await twin.instances.beat(t + 1_000)).toMatchObject({ shared: true });
  });
});
