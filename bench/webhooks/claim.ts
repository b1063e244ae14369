/**
 * Micro-benchmark of the delivery queue's claim path, without HTTP: what a delivery costs when it
 * must be claimed from a backlog (an endpoint was slow or down, or the relay fell behind) instead
 * of starting straight from ingress. Stores BACKLOG due, unleased deliveries for each of 5
 * endpoints, then claims them in batches of each size in BATCHES and records a successful attempt
 * for each, all through `SqliteQueue`, printing CPU per delivery.
 * Run: bun bench/webhooks/claim.ts   (env BACKLOG, default 2000; BATCHES, default "1,5,25")
 */
import type { NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { benchStore, eventAndDelivery, recordSuccess } from "./store-fixture.ts";

const BACKLOG = Number(process.env.BACKLOG ?? 2000);
const BATCHES = (process.env.BATCHES ?? "1,5,25").split(",").map(Number);
const ENDPOINTS = 5;

const bench = await benchStore(ENDPOINTS);
const { queue } = bench.store;
let clock = Date.now();

/** BACKLOG events per endpoint, each with one due delivery that nobody holds. */
async function fillBacklog(): Promise<void> {
  for (let i = 0; i < BACKLOG; i++) {
    const events: NewEvent[] = [];
    const deliveries: NewDelivery[] = [];
    for (const endpoint of bench.endpoints) {
      const { event, delivery } = eventAndDelivery(endpoint, clock);
      events.push(event);
      deliveries.push(delivery);
    }
    await queue.enqueue(events, deliveries);
  }
  clock += 1;
}

for (const limit of BATCHES) {
  await fillBacklog();
  const before = process.cpuUsage();
  let claimed = 0;
  for (;;) {
    const batch = await queue.claimDue(clock, {
      leaseId: `lease_${claimed}`,
      limit,
      perEndpoint: 10,
      leaseMs: 70_000,
      maxBytes: Number.POSITIVE_INFINITY,
    });
    if (batch.length === 0) break;
    claimed += batch.length;
    await Promise.all(batch.map((c) => recordSuccess(queue, c.delivery, clock, c.leaseId)));
  }
  const cpu = process.cpuUsage(before);
  console.log(
    `claims of ${limit}: ${claimed} deliveries from a backlog of ${BACKLOG} per endpoint, ${((cpu.user + cpu.system) / claimed).toFixed(1)} µs CPU per delivery (claim + record)`,
  );
}
await bench.close();
