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
    fields: ["messages"], containsHistory: false, isTest: false,
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
