// PostgreSQL keeps due work in due_deliveries, with no foreign key (db/postgres/0021): a due row
// whose delivery is gone or done (an event deleted by cascade under a replay racing its purge, or
// an instance of the release before) must never take an endpoint's slot or be sent again, and is swept.
import { afterEach, describe, expect, test } from "bun:test";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { testBackend } from "../support/backend.ts";
import { testDeps, type TestDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow } from "../support/queue-rows.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RETENTION = { "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 };

async function queueWithStrays(): Promise<{ deps: TestDeps; t: number; real: string[] }> {
  const deps = await testDeps();
  cleanups.push(deps.cleanup);
  const t = deps.clock.now();
  await deps.store.directory.createAccount({
    id: "acc_due",
    name: "Due",
    email: "due@example.com",
    billingStatus: "active",
    retention: "24h",
    maxNumbers: null,
    createdAt: t,
  });
  await deps.store.endpoints.create(endpointRow("ep_due", "acc_due", t));
  // Ten due rows older than any real one: five whose delivery never existed (an event's cascade
  // took it), five whose delivery succeeded (completed by an instance of the release before).
  const done = Array.from({ length: 5 }, (_, i) => eventRow(newEventId(deps.random, t), "acc_due", t - 100 + i));
  await deps.store.queue.enqueue(
    done,
    done.map((e, i) => deliveryRow(newDeliveryId(deps.random, t), e, "ep_due", t - 100 + i)),
  );
  await deps.query("UPDATE deliveries SET status = 'succeeded'");
  await deps.query(`INSERT INTO due_deliveries (delivery_id, endpoint_id, event_id, due_at)
    SELECT 'dlv_gone_' || n, 'ep_due', 'evt_gone_' || n, ${t - 200} + n FROM generate_series(1, 5) n`);
  const events = Array.from({ length: 5 }, (_, i) => eventRow(newEventId(deps.random, t), "acc_due", t + i));
  const real = events.map(() => newDeliveryId(deps.random, t));
  await deps.store.queue.enqueue(
    events,
    events.map((e, i) => deliveryRow(real[i]!, e, "ep_due", t + i)),
  );
  return { deps, t, real };
}

describe.skipIf(testBackend() !== "postgres")("PostgreSQL: due rows without a pending delivery", () => {
  test("take no slot and are never claimed: the endpoint's real due deliveries are", async () => {
    const { deps, t, real } = await queueWithStrays();
    const claimed = await deps.store.queue.claimDue(t + 1_000, {
      leaseId: "lease_due",
      limit: 64,
      perEndpoint: 10,
      leaseMs: 70_000,
      maxBytes: Number.POSITIVE_INFINITY,
    });
    expect(claimed.map((c) => c.delivery.id).sort()).toEqual([...real].sort());
    expect(await deps.query("SELECT COUNT(*)::int AS n FROM endpoint_slots WHERE delivery_id IS NOT NULL")).toEqual([
      { n: 5 },
    ]);
  });

  test("are swept by the retention purge, and the pending count is true again; pending ones stay", async () => {
    const { deps, t, real } = await queueWithStrays();
    expect(await deps.store.queue.pendingCount()).toBe(15);
    await deps.store.retention.purgeWebhookHistory(t + 1_000, RETENTION, 1_000);
    expect(await deps.store.queue.pendingCount()).toBe(5);
    const left = (await deps.query("SELECT delivery_id FROM due_deliveries ORDER BY delivery_id")).map(
      (r) => r.delivery_id,
    );
    expect(left).toEqual([...real].sort());
  });
});
