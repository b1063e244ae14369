/**
 * What the pending-deliveries gauge (refreshed once a minute) costs the server's thread during a
 * long outage: BACKLOG due deliveries waiting in the store, then one pendingCount() as the
 * dispatcher's tick makes it once a minute. Reports how long it took and the longest the event
 * loop went without running a 1 ms timer meanwhile.
 * Run: bun bench/webhooks/pending.ts   (env BACKLOG, 1,000,000 by default)
 */
import type { NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { benchStore, eventAndDelivery, stallDuring } from "./store-fixture.ts";

const BACKLOG = Number(process.env.BACKLOG ?? 1_000_000);
const BATCH = 1_000;

const bench = await benchStore(2);
const { queue } = bench.store;
let at = Date.now();
for (let i = 0; i < BACKLOG; i += BATCH) {
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  for (let j = i; j < Math.min(BACKLOG, i + BATCH); j++) {
    const { event, delivery } = eventAndDelivery(bench.endpoints[j % 2]!, at++);
    events.push(event);
    deliveries.push(delivery);
  }
  await queue.enqueue(events, deliveries);
}
let counted = 0;
for (let run = 1; run <= 3; run++) {
  const { ms, longestStallMs } = await stallDuring(async () => (counted = await queue.pendingCount()));
  console.log(
    `pending count of ${counted} due deliveries, run ${run}: ${ms.toFixed(1)} ms; longest event-loop stall ${longestStallMs.toFixed(1)} ms`,
  );
}
if (counted !== BACKLOG) throw new Error(`counted ${counted} of ${BACKLOG}`);
await bench.close();
