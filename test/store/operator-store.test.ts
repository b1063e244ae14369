// The storage seam's operator parts (src/store/operators.ts, src/store/overview.ts, the users of an
// account, the request log's usage reports), on the backend SWITCHBOARD_TEST_BACKEND names, as storage-suite.test.ts is.
import { afterEach, describe, expect, test } from "bun:test";
import type { Completion } from "../../src/store/queue.ts";
import { hourOf } from "../../src/store/hours.ts";
import type { Store } from "../../src/store/store.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { testDeps, type TestDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow, firstAttempt } from "../support/queue-rows.ts";
import { recordsCounting } from "../support/store-rows.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function fresh(): Promise<TestDeps> {
  const deps = await testDeps();
  cleanups.push(deps.cleanup);
  return deps;
}

async function account(store: Store, id: string, at: number) {
  return store.directory.createAccount({
    id,
    name: `Account ${id}`,
    email: `${id}@example.com`,
    billingStatus: "active",
    retention: "7d",
    maxNumbers: null,
    createdAt: at,
  });
}

const operator = (id: string, email: string, at: number) => ({ id, email, passwordHash: `hash-${id}`, createdAt: at });

describe("operators", () => {
  test("one per email (any case); listed oldest first; read by id and email", async () => {
    const { store, clock } = await fresh();
    const t = clock.now();
    expect(await store.operators.create(operator("opr_b", "B@Example.com", t + 1))).toMatchObject({
      email: "b@example.com",
    });
    await store.operators.create(operator("opr_a", "a@example.com", t));
    expect(await store.operators.create(operator("opr_c", "b@EXAMPLE.com", t + 2))).toBeNull();
    expect((await store.operators.list()).map((o) => o.id)).toEqual(["opr_a", "opr_b"]);
    expect((await store.operators.byEmail("B@EXAMPLE.COM"))?.id).toBe("opr_b");
    expect((await store.operators.byId("opr_a"))?.email).toBe("a@example.com");
    expect(await store.operators.byId("opr_c")).toBeUndefined();
  });

  test("sessions: found by hash until purged; a new password or a deletion ends the operator's sessions", async () => {
    const { store, clock } = await fresh();
    const t = clock.now();
    await store.operators.create(operator("opr_a", "a@example.com", t));
    await store.operators.create(operator("opr_b", "b@example.com", t));
    const session = (hash: string, id: string, expiresAt: number) =>
      store.operators.createSession({ tokenHash: hash, operatorId: id, createdAt: t, expiresAt });
    await session("h1", "opr_a", t + HOUR);
    await session("h2", "opr_a", t + 2 * HOUR);
    await session("h3", "opr_b", t + 2 * HOUR);
    expect(await store.operators.findSession("h1")).toEqual({
      tokenHash: "h1",
      operatorId: "opr_a",
      createdAt: t,
      expiresAt: t + HOUR,
    });
    expect(await store.retention.purgeOperatorSessions(t + HOUR, 100)).toBe(1);
    expect(await store.operators.findSession("h1")).toBeUndefined();

    expect(await store.operators.setPasswordHash("opr_a", "new-hash")).toBe(true);
    expect((await store.operators.byId("opr_a"))?.passwordHash).toBe("new-hash");
    expect(await store.operators.findSession("h2")).toBeUndefined();
    expect(await store.operators.findSession("h3")).toBeDefined();
    expect(await store.operators.setPasswordHash("opr_nobody", "x")).toBe(false);

    expect(await store.operators.delete("opr_b")).toBe(true);
    expect(await store.operators.findSession("h3")).toBeUndefined();
    expect(await store.operators.delete("opr_b")).toBe(false);
    await store.operators.deleteSession("h-unknown");
  });

  test("an account's users, oldest first, and no other account's", async () => {
    const { store, clock } = await fresh();
    const t = clock.now();
    await account(store, "acc_a", t);
    await account(store, "acc_b", t);
    const user = (id: string, accountId: string, at: number) =>
      store.users.create({ id, accountId, email: `${id}@example.com`, passwordHash: "h", createdAt: at });
    await user("usr_2", "acc_a", t + 2);
    await user("usr_1", "acc_a", t + 1);
    await user("usr_3", "acc_b", t);
    expect((await store.users.ofAccount("acc_a")).map((u) => u.id)).toEqual(["usr_1", "usr_2"]);
    expect(await store.users.ofAccount("acc_nobody")).toEqual([]);
  });
});

describe("the overview's counts", () => {
  test("events received by the hour: counts added up, by several writers (instances) too, summed since each hour", async () => {
    const { store, clock } = await fresh();
    const h = hourOf(clock.now());
    await store.overview.addEventCounts([
      { hour: h - 2 * HOUR, received: 4, unrouted: 1 },
      { hour: h, received: 2, unrouted: 0 },
    ]);
    // Added to what is there, as another instance's flush of the same hour is.
    await Promise.all([
      store.overview.addEventCounts([{ hour: h, received: 3, unrouted: 2 }]),
      store.overview.addEventCounts([{ hour: h, received: 1, unrouted: 1 }]),
    ]);
    expect(await store.overview.eventsSince([h, h - DAY, h + HOUR])).toEqual([
      { received: 6, unrouted: 3 },
      { received: 10, unrouted: 4 },
      { received: 0, unrouted: 0 },
    ]);
    expect(await store.overview.eventsSince([])).toEqual([]);
    expect(await store.retention.purgeEventCounts(h - HOUR, 10)).toBe(1);
    expect(await store.overview.eventsSince([h - DAY])).toEqual([{ received: 6, unrouted: 3 }]);
  });

  test("attempts and parks by the hour, endpoints failing now, and those disabled since a time", async () => {
    const { store, clock, random } = await fresh();
    const t = clock.now();
    await account(store, "acc_a", t);
    for (const id of ["ep_ok", "ep_failing", "ep_gone"]) await store.endpoints.create(endpointRow(id, "acc_a", t));
    const attempt = async (
      endpointId: string,
      at: number,
      status: number,
      result: Pick<Completion, "next" | "effect">,
    ) => {
      const event = eventRow(newEventId(random, at), "acc_a", at);
      const delivery = deliveryRow(newDeliveryId(random, at), event, endpointId, at);
      await store.queue.enqueue([event], [delivery]);
      const claimed = await store.queue.claimDue(at, {
        leaseId: `l_${delivery.id}`,
        limit: 10,
        perEndpoint: 10,
        leaseMs: 60_000,
        maxBytes: Infinity,
      });
      expect(claimed.map((c) => c.delivery.id)).toEqual([delivery.id]);
      await store.queue.completeAttempt(firstAttempt(delivery.id, endpointId, at, status, result, `l_${delivery.id}`));
    };
    await attempt("ep_ok", t - 3 * HOUR, 200, { next: { status: "succeeded" }, effect: "success" });
    await attempt("ep_ok", t, 200, { next: { status: "succeeded" }, effect: "success" });
    await attempt("ep_failing", t, 500, { next: { status: "pending", nextAttemptAt: t + DAY }, effect: "failure" });
    clock.advance(1000);
    await attempt("ep_gone", t + 1000, 410, { next: { status: "parked", reason: "gone" }, effect: "gone" });
    // The 410 is a failed attempt and a park.
    expect(await store.overview.deliveriesSince(t)).toEqual({ succeeded: 1, failed: 2, parked: 1 });
    expect(await store.overview.deliveriesSince(t - 3 * HOUR)).toEqual({ succeeded: 2, failed: 2, parked: 1 });
    expect(await store.overview.failingEndpoints()).toBe(1);
    expect(await store.overview.disabledSince(t, 10)).toEqual([
      {
        id: "ep_gone",
        accountId: "acc_a",
        url: "https://receiver.example/ep_gone",
        disabledReason: "gone",
        updatedAt: t + 1000,
      },
    ]);
    expect(await store.overview.disabledSince(t + 1001, 10)).toEqual([]);
  });

  test("calls per account and kind, and usage per account, number, UTC day, kind and label, in [from, to)", async () => {
    const { store, clock } = await fresh();
    const day = clock.now();
    await account(store, "acc_a", day);
    await account(store, "acc_b", day);
    const u = (
      accountId: string,
      targetId: string,
      hour: number,
      kind: "forwarded" | "upstream_error" | "refused",
      label: string,
      count: number,
    ) => ({
      accountId,
      targetId,
      hour,
      kind,
      label,
      count,
    });
    await store.requests.append(
      recordsCounting([
        u("acc_a", "1001", day + HOUR, "forwarded", "POST /{phone_number_id}/messages", 5),
        u("acc_a", "1001", day + 23 * HOUR, "forwarded", "POST /{phone_number_id}/messages", 2),
        u("acc_a", "1001", day + 2 * HOUR, "upstream_error", "131031", 1),
        u("acc_a", "1002", day + 24 * HOUR, "refused", "1006", 4),
        u("acc_b", "2001", day + 3 * HOUR, "forwarded", "GET /{phone_number_id}", 7),
        u("acc_b", "2001", day + 48 * HOUR, "forwarded", "GET /{phone_number_id}", 100),
      ]),
    );
    const sorted = <T extends { accountId: string; kind: string }>(rows: T[]) =>
      [...rows].sort((a, b) => a.accountId.localeCompare(b.accountId) || a.kind.localeCompare(b.kind));
    expect(sorted(await store.requests.callTotals(day, day + 48 * HOUR))).toEqual([
      { accountId: "acc_a", kind: "forwarded", count: 7 },
      { accountId: "acc_a", kind: "refused", count: 4 },
      { accountId: "acc_a", kind: "upstream_error", count: 1 },
      { accountId: "acc_b", kind: "forwarded", count: 7 },
    ]);
    expect(await store.requests.usageByDay(null, day, day + 48 * HOUR)).toEqual([
      {
        accountId: "acc_a",
        targetId: "1001",
        day,
        kind: "forwarded",
        label: "POST /{phone_number_id}/messages",
        count: 7,
      },
      { accountId: "acc_a", targetId: "1001", day, kind: "upstream_error", label: "131031", count: 1 },
      { accountId: "acc_a", targetId: "1002", day: day + DAY, kind: "refused", label: "1006", count: 4 },
      { accountId: "acc_b", targetId: "2001", day, kind: "forwarded", label: "GET /{phone_number_id}", count: 7 },
    ]);
    expect(await store.requests.usageByDay("acc_b", day, day + 49 * HOUR)).toEqual([
      { accountId: "acc_b", targetId: "2001", day, kind: "forwarded", label: "GET /{phone_number_id}", count: 7 },
      {
        accountId: "acc_b",
        targetId: "2001",
        day: day + 2 * DAY,
        kind: "forwarded",
        label: "GET /{phone_number_id}",
        count: 100,
      },
    ]);
    expect(await store.requests.usageByDay("acc_nobody", day, day + 49 * HOUR)).toEqual([]);
  });
});
