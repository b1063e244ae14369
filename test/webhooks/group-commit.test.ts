import { afterEach, expect, test } from "bun:test";
import { createAccount } from "../../src/admin/operations.ts";
import type { NewDelivery, NewEvent } from "../../src/store/webhooks.ts";
import { testDeps } from "../support/harness.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

test("writes of one event-loop turn share a commit, yet a failing one fails alone and the others are durable", async () => {
  const deps = testDeps();
  cleanups.push(deps.cleanup);
  const account = await createAccount(deps, { name: "Group", email: "group@example.com" });
  const now = deps.clock.now();
  const event = (id: string): NewEvent => ({
    id, accountId: account.id, receivedAt: now, body: new TextEncoder().encode("{}"), upstreamSignature: null,
    fields: ["messages"], isTest: false,
  });
  const delivery = (id: string, eventId: string): NewDelivery => ({
    id, accountId: account.id, endpointId: "no-such-endpoint", eventId, nextAttemptAt: now, replayOf: null, createdAt: now,
  });

  // Started in the same turn: the second breaks a foreign key (its endpoint does not exist).
  const good = deps.store.webhooks.enqueue([event("evt_good")], []);
  const bad = deps.store.webhooks.enqueue([event("evt_bad")], [delivery("msg_bad", "evt_bad")]);
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
  const endpoint = (id: string) => deps.store.webhooks.createEndpoint({
    id, accountId: account.id, url: `https://receiver.example/${id}`, fields: ["messages"], phoneNumberId: null, secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0",
    previousSecret: null, previousSecretExpiresAt: null, enabled: true, disabledReason: null, consecutiveFailures: 0, lastSuccessAt: null,
    warnedAt: null, createdAt: now, updatedAt: now,
  });
  await endpoint("ep_gone");
  await endpoint("ep_kept");
  const event = (id: string): NewEvent => ({
    id, accountId: account.id, receivedAt: now, body: new TextEncoder().encode("{}"), upstreamSignature: null,
    fields: ["messages"], isTest: false,
  });
  const delivery = (id: string, endpointId: string, eventId: string): NewDelivery => ({
    id, accountId: account.id, endpointId, eventId, nextAttemptAt: now, replayOf: null, createdAt: now,
  });
  await deps.store.webhooks.enqueue([event("evt_alone"), event("evt_shared")], [
    delivery("msg_1", "ep_gone", "evt_alone"), delivery("msg_2", "ep_gone", "evt_shared"), delivery("msg_3", "ep_kept", "evt_shared"),
  ]);

  expect(await deps.store.webhooks.deleteEndpoint("ep_gone")).toBe(true);
  expect(await deps.store.webhooks.delivery("msg_1")).toBeUndefined();
  expect(await deps.store.webhooks.eventBody("evt_alone")).toBeNull();
  expect(deps.store.db.$client.query("SELECT COUNT(*) AS n FROM events").get()).toEqual({ n: 1 });
  expect(await deps.store.webhooks.eventBody("evt_shared")).not.toBeNull();
  expect((await deps.store.webhooks.delivery("msg_3"))?.status).toBe("pending");
});
