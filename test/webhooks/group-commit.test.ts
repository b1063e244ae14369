import { afterEach, expect, test } from "bun:test";
import { createAccount } from "../../src/accounts/accounts.ts";
import type { SqliteStoreOptions } from "../../src/store/sqlite/store.ts";
import { sqliteTestDeps } from "../support/harness.ts";
import { manualSync, settledFlags } from "../support/manual-sync.ts";
import { deliveryRow, endpointRow, eventRow, firstAttempt } from "../support/queue-rows.ts";
import { bySystem } from "../../src/audit/entry.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A fresh store with one account. */
async function withAccount(name: string, store?: SqliteStoreOptions) {
  const deps = await sqliteTestDeps({ store });
  cleanups.push(deps.cleanup);
  const account = await createAccount(deps, { name, email: `${name.toLowerCase()}@example.com` }, bySystem("test"));
  return { deps, account, now: deps.clock.now() };
}

test("writes of one event-loop turn share a commit, yet a failing one fails alone and the others are durable", async () => {
  const { deps, account, now } = await withAccount("Group");
  const event = (id: string) => eventRow(id, account.id, now);

  // Started in the same turn: the second breaks a foreign key (its endpoint does not exist).
  const good = deps.store.queue.enqueue([event("evt_good")], []);
  const bad = deps.store.queue.enqueue(
    [event("evt_bad")],
    [deliveryRow("msg_bad", event("evt_bad"), "no-such-endpoint", now)],
  );
  const third = deps.store.queue.enqueue([event("evt_third")], []);
  const results = await Promise.allSettled([good, bad, third]);

  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(await deps.store.history.eventBody("evt_good")).not.toBeNull();
  expect(await deps.store.history.eventBody("evt_third")).not.toBeNull();
  // Nothing of the failed call was kept: neither its delivery nor its event.
  expect(await deps.store.history.eventBody("evt_bad")).toBeNull();
  expect(await deps.store.history.delivery("msg_bad")).toBeUndefined();
});

test("in a shared commit, new events resolve first; attempt records resolve on a later turn, so ingress answers before the next attempts start", async () => {
  const { deps, account, now } = await withAccount("Order");
  await deps.store.endpoints.create(endpointRow("ep_order", account.id, now));
  const old = eventRow("evt_old", account.id, now);
  await deps.store.queue.enqueue([old], [deliveryRow("msg_old", old, "ep_order", now, now + 60_000)]);

  const order: string[] = [];
  let attemptsWhenEventResolved: unknown;
  // The attempt record is staged first, in the same turn as the new event.
  const recorded = deps.store.queue
    .completeAttempt(firstAttempt("msg_old", "ep_order", now))
    .then(() => order.push("attempt recorded"));
  const stored = deps.store.queue.enqueue([eventRow("evt_new", account.id, now)], []).then(() => {
    order.push("event stored");
    attemptsWhenEventResolved = deps.store.db.$client.query("SELECT COUNT(*) AS n FROM attempts").get();
  });
  await Promise.all([recorded, stored]);

  expect(order).toEqual(["event stored", "attempt recorded"]);
  // One commit: the attempt was durable already when the event's promise resolved.
  expect(attemptsWhenEventResolved).toEqual({ n: 1 });
});

test("new events wait for the disk, and so do attempt records of their commit; a commit of attempt records alone does not", async () => {
  const disk = manualSync();
  const { deps, account, now } = await withAccount("Disk", { syncWal: disk.sync });
  await deps.store.endpoints.create(endpointRow("ep_disk", account.id, now));
  const stored = eventRow("evt_stored", account.id, now);
  const storing = deps.store.queue.enqueue(
    [stored],
    [
      deliveryRow("msg_a", stored, "ep_disk", now, now + 60_000),
      deliveryRow("msg_b", stored, "ep_disk", now, now + 60_000),
    ],
  );
  expect(await disk.startedCount(1)).toBe(1);
  await disk.finish();
  await storing;

  // Attempt records alone: committed is enough (lost to a power cut, they mean one more attempt).
  await deps.store.queue.completeAttempt(firstAttempt("msg_a", "ep_disk", now));
  expect(disk.started).toBe(1);

  // With a new event in the same turn, the attempt record resolves after the event, after the sync.
  const recorded = deps.store.queue.completeAttempt(firstAttempt("msg_b", "ep_disk", now));
  const queued = deps.store.queue.enqueue([eventRow("evt_new", account.id, now)], []);
  const done = settledFlags([queued, recorded]);
  expect(await disk.startedCount(2)).toBe(2);
  expect(done).toEqual([false, false]);
  await disk.finish();
  expect(done).toEqual([true, true]);
});

test("deleting an endpoint deletes its deliveries and the events no other delivery needs", async () => {
  const { deps, account, now } = await withAccount("Owner");
  await deps.store.endpoints.create(endpointRow("ep_gone", account.id, now));
  await deps.store.endpoints.create(endpointRow("ep_kept", account.id, now));
  const alone = eventRow("evt_alone", account.id, now);
  const shared = eventRow("evt_shared", account.id, now);
  await deps.store.queue.enqueue(
    [alone, shared],
    [
      deliveryRow("msg_1", alone, "ep_gone", now),
      deliveryRow("msg_2", shared, "ep_gone", now),
      deliveryRow("msg_3", shared, "ep_kept", now),
    ],
  );

  expect(await deps.store.endpoints.delete("ep_gone")).toBe(true);
  expect(await deps.store.history.delivery("msg_1")).toBeUndefined();
  expect(await deps.store.history.eventBody("evt_alone")).toBeNull();
  expect(deps.store.db.$client.query("SELECT COUNT(*) AS n FROM events").get()).toEqual({ n: 1 });
  expect(await deps.store.history.eventBody("evt_shared")).not.toBeNull();
  expect((await deps.store.history.delivery("msg_3"))?.status).toBe("pending");
});

test("an attempt that ends after its delivery went with its endpoint records nothing, and the attempts committed beside it are kept", async () => {
  const { deps, account, now } = await withAccount("Deleted");
  await deps.store.endpoints.create(endpointRow("ep_gone", account.id, now));
  await deps.store.endpoints.create(endpointRow("ep_kept", account.id, now));
  const event = eventRow("evt_both", account.id, now);
  // Both leased to this process, as deliveries in flight are.
  await deps.store.queue.enqueue(
    [event],
    [
      deliveryRow("msg_gone", event, "ep_gone", now, now + 60_000),
      deliveryRow("msg_kept", event, "ep_kept", now, now + 60_000),
    ],
  );
  expect(await deps.store.endpoints.delete("ep_gone")).toBe(true);

  // Both attempts end in the same turn, so they share one commit.
  const results = await Promise.allSettled([
    deps.store.queue.completeAttempt(
      firstAttempt("msg_gone", "ep_gone", now + 5, 500, {
        next: { status: "pending", nextAttemptAt: now + 5_000 },
        effect: "failure",
      }),
    ),
    deps.store.queue.completeAttempt(firstAttempt("msg_kept", "ep_kept", now + 5)),
  ]);

  expect(results).toEqual([
    { status: "fulfilled", value: { consecutiveFailures: 0, warned: false, disabled: null } },
    { status: "fulfilled", value: { consecutiveFailures: 0, warned: false, disabled: null } },
  ]);
  expect(await deps.store.history.attempts("msg_gone")).toEqual([]);
  expect((await deps.store.history.attempts("msg_kept")).map((a) => a.statusCode)).toEqual([200]);
  expect((await deps.store.history.delivery("msg_kept"))?.status).toBe("succeeded");
  const hours = deps.store.db.$client
    .query("SELECT endpoint_id, succeeded, failed FROM endpoint_hours ORDER BY endpoint_id")
    .all();
  expect(hours).toEqual([{ endpoint_id: "ep_kept", succeeded: 1, failed: 0 }]);
});
