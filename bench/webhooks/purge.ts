/**
 * What deleting deliveries in bulk costs the server's thread: DELIVERIES delivered deliveries of
 * one endpoint, all past its account's 24-hour retention, purged by the webhook history's retention
 * policy as the retention worker runs it; then as many recent ones of another endpoint, deleted with the endpoint. Reports
 * how long each took, and the longest the event loop went without running a 1 ms timer meanwhile
 * (what a request arriving then would wait for at most).
 * Run: bun bench/webhooks/purge.ts   (env DELIVERIES, 100,000 by default)
 */
import { cutOf, RETENTION_POLICIES } from "../../src/retention/policies.ts";
import type { NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { benchStore, eventAndDelivery, recordSuccess, stallDuring, type BenchEndpoint } from "./store-fixture.ts";

const DELIVERIES = Number(process.env.DELIVERIES ?? 100_000);
const DAY = 86_400_000;
const BATCH = 500;

// As the server opens it: with the thread that checkpoints the WAL beside it.
const bench = await benchStore(2, {
  backgroundCheckpoints: {
    workerUrl: new URL("../../src/store/sqlite/checkpoint-worker.ts", import.meta.url).href,
    onError: (m) => console.error(m),
  },
});
const { queue } = bench.store;
const now = Date.now();
const [expiring, deleted] = bench.endpoints as [BenchEndpoint, BenchEndpoint];

async function deliver(endpoint: BenchEndpoint, from: number): Promise<void> {
  for (let i = 0; i < DELIVERIES; i += BATCH) {
    const events: NewEvent[] = [];
    const deliveries: NewDelivery[] = [];
    for (let j = i; j < Math.min(DELIVERIES, i + BATCH); j++) {
      const { event, delivery } = eventAndDelivery(endpoint, from + j, from + j + 60_000);
      events.push(event);
      deliveries.push(delivery);
    }
    await queue.enqueue(events, deliveries);
    await Promise.all(deliveries.map((d) => recordSuccess(queue, d, d.createdAt)));
  }
}

async function timed(work: () => Promise<unknown>): Promise<string> {
  const { ms, longestStallMs } = await stallDuring(work);
  return `${ms.toFixed(0)} ms (${((ms * 1000) / DELIVERIES).toFixed(1)} µs per delivery); longest event-loop stall ${longestStallMs.toFixed(1)} ms`;
}

const history = RETENTION_POLICIES.find((p) => p.name === "webhook_history");
if (!history) throw new Error("no webhook_history policy");
const purge = () =>
  history.purge(
    bench.store,
    cutOf(history.window, now, bench.store.directory.accounts(), { auditRetentionMs: 0 }),
    history.batch,
  );

await deliver(expiring, now - 2 * DAY);
await deliver(deleted, now - DELIVERIES);
console.log(`purge of ${DELIVERIES} expired deliveries: ${await timed(purge)}`);
console.log(
  `deletion of an endpoint with ${DELIVERIES} deliveries: ${await timed(() => bench.store.endpoints.delete(deleted.id))}`,
);
const left = bench.store.db.$client
  .query("SELECT (SELECT COUNT(*) FROM deliveries) + (SELECT COUNT(*) FROM events) AS n")
  .get() as { n: number };
if (left.n !== 0) throw new Error(`${left.n} rows left`);
await bench.close();
