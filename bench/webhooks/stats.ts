/**
 * What the dashboard's endpoint chart (GET /api/endpoints/{id}/stats) costs the server's thread
 * when the endpoint has DELIVERIES delivered over the last 7 days (each with one successful
 * attempt), beside as many of another endpoint: the time of one read of 24 and of 168 hours.
 * Run: bun bench/webhooks/stats.ts   (env DELIVERIES, 200,000 by default)
 */
import { HOUR } from "../../src/store/hours.ts";
import type { NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { benchStore, eventAndDelivery, recordSuccess } from "./store-fixture.ts";

const DELIVERIES = Number(process.env.DELIVERIES ?? 200_000);
const WEEK = 7 * 24 * HOUR;
const BATCH = 500;

const bench = await benchStore(2);
const { queue } = bench.store;
const now = Date.now();
const total = 2 * DELIVERIES;
let written = 0;
for (let i = 0; i < total; i += BATCH) {
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  for (let j = i; j < Math.min(total, i + BATCH); j++) {
    const at = Math.floor(now - WEEK + (j * WEEK) / total);
    const { event, delivery } = eventAndDelivery(bench.endpoints[j % 2]!, at, at + 60_000);
    events.push(event);
    deliveries.push(delivery);
  }
  await queue.enqueue(events, deliveries);
  await Promise.all(deliveries.map((d) => recordSuccess(queue, d, d.createdAt)));
  written += deliveries.length;
  if (written % 100_000 === 0) console.error(`  ${written} of ${total} deliveries stored`);
}
for (const hours of [24, 168]) {
  const started = performance.now();
  const stats = await bench.store.history.hourlyStats(bench.endpoints[0]!.id, now - (hours - 1) * HOUR, now);
  const ms = performance.now() - started;
  console.log(
    `stats of ${hours} h for an endpoint with ${DELIVERIES} deliveries in 7 days: ${ms.toFixed(2)} ms (${stats.reduce((n, s) => n + s.succeeded, 0)} attempts counted)`,
  );
}
await bench.close();
