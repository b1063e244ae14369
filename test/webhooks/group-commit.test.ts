import { afterEach, expect, test } from "bun:test";
import { createAccount } from "../../src/admin/operations.ts";
import { testDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow } from "../support/queue-rows.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

test("writes of one event-loop turn share a commit, yet a failing one fails alone and the others are durable", async () => {
  const deps = testDeps();
  cleanups.push(deps.cleanup);
  const account = await createAccount(deps, { name: "Group", email: "group@example.com" });
  const now = deps.clock.now();
  const event = (id: string) => eventRow(id, account.id, now);

  // Started in the same turn: the second breaks a foreign key (its endpoint does not exist).
  const good = deps.store.webhooks.enqueue([event("evt_good")], []);
  const bad = deps.store.webhooks.enqueue([event("evt_bad")], [deliveryRow("msg_bad", event("evt_bad"), "no-such-endpoint", now)]);
  const third = deps.store.webhooks.enqueue([event("evt_third")], []);
  const results = await Promise.allSettled([good, bad, third]);

  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(await deps.store.webhooks.eventBody("evt_good")).not.toBeNull();
  expect(await deps.store.webhooks.eventBody("evt_third")).not.toBeNull();
  // Nothing of the failed call was kept: neither its delivery nor its event.
  expect(await deps.store.webhooks.eventBody("evt_bad")).toBeNull();
  expect(await deps.store.webhooks.delivery("msg_bad")).toBeUndefined();
});

test("deleting an endpoint deletes its deliveries and the events no other delivery needs", async () => {
  const deps = testDeps();
  cleanups.push(deps.cleanup);
  const account = await createAccount(deps, { name: "Owner", email: "owner@example.com" });
  const now = deps.clock.now();
  await deps.store.webhooks.createEndpoint(endpointRow("ep_gone", account.id, now));
  await deps.store.webhooks.createEndpoint(endpointRow("ep_kept", account.id, now));
  const alone = eventRow("evt_alone", account.id, now);
  const shared = eventRow("evt_shared", account.id, now);
  await deps.store.webhooks.enqueue([alone, shared], [
    deliveryRow("msg_1", alone, "ep_gone", now), deliveryRow("msg_2", shared, "ep_gone", now), deliveryRow("msg_3", shared, "ep_kept", now),
  ]);

  expect(await deps.store.webhooks.deleteEndpoint("ep_gone")).toBe(true);
  expect(await deps.store.webhooks.delivery("msg_1")).toBeUndefined();
  expect(await deps.store.webhooks.eventBody("evt_alone")).toBeNull();
  expect(deps.store.db.$client.query("SELECT COUNT(*) AS n FROM events").get()).toEqual({ n: 1 });
  expect(await deps.store.webhooks.eventBody("evt_shared")).not.toBeNull();
  expect((await deps.store.webhooks.delivery("msg_3"))?.status).toBe("pending");
});
