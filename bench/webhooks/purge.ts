/**
 * What the retention purge costs the server's thread: DELIVERIES delivered deliveries of a 24-hour
 * account, all past retention, purged by one call as the dispatcher's tick makes it. Reports the
 * time the purge took, and the longest the event loop went without running a 1 ms timer meanwhile
 * (what a request arriving during the purge would wait for at most).
 * Run: bun bench/webhooks/purge.ts   (env DELIVERIES, 100,000 by default)
 */
import type { NewDelivery, NewEvent } from "../../src/store/webhooks.ts";
import { benchStore, eventAndDelivery, recordSuccess } from "./store-fixture.ts";

const DELIVERIES = Number(process.env.DELIVERIES ?? 100_000);
const DAY = 86_400_000;
const BATCH = 500;

// As the server opens it: with the thread that checkpoints the WAL beside it.
const bench = await benchStore(1, {
  backgroundCheckpoints: { workerUrl: new URL("../../src/store/sqlite/checkpoint-worker.ts", import.meta.url).href, onError: (m) => console.error(m) },
});
const hooks = bench.store.webhooks;
const now = Date.now();
for (let i = 0; i < DELIVERIES; i += BATCH) {
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  for (let j = i; j < Math.min(DELIVERIES, i + BATCH); j++) {
    const at = now - 2 * DAY + j;
    const { event, delivery } = eventAndDelivery(bench.endpoints[0]!, at, at + 60_000);
    events.push(event);
    deliveries.push(delivery);
  }
  await hooks.enqueue(events, deliveries);
  await Promise.all(deliveries.map((d) => recordSuccess(hooks, d, d.createdAt)));
}

let longest = 0;
let last = performance.now();
const timer = setInterval(() => {
  const t = performance.now();
  longest = Math.max(longest, t - last);
  last = t;
}, 1);
await Bun.sleep(20);
longest = 0;
last = performance.now();
const started = performance.now();
const removed = await hooks.purgeExpired(now, { "24h": DAY, "7d": 7 * DAY });
const ms = performance.now() - started;
await Bun.sleep(5);
clearInterval(timer);
console.log(`purged ${removed.deliveries} deliveries and ${removed.events} events in ${ms.toFixed(0)} ms (${(ms * 1000 / removed.deliveries).toFixed(1)} µs each); longest event-loop stall ${longest.toFixed(1)} ms`);
bench.close();
