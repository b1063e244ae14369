/**
 * Micro-benchmark of the delivery queue's SQLite hot path, without HTTP: what one delivery costs
 * the store (enqueue leased, then record a successful attempt), in CPU per delivery. Mirrors the
 * server's shape: each turn stores EVENTS_PER_TURN upstream events of ACCOUNTS entries (one event
 * row and one delivery per account) and completes the deliveries stored by the previous turn.
 * Run: bun bench/webhooks/store.ts   (env TURNS, EVENTS_PER_TURN, ACCOUNTS override the defaults)
 */
import type { NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { benchStore, eventAndDelivery, recordSuccess } from "./store-fixture.ts";

const TURNS = Number(process.env.TURNS ?? 4000);
const EVENTS_PER_TURN = Number(process.env.EVENTS_PER_TURN ?? 5);
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 5);

const bench = await benchStore(ACCOUNTS);
const { queue } = bench.store;
let clock = Date.now();

function turnWork(): { events: NewEvent[]; deliveries: NewDelivery[] } {
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  for (let e = 0; e < EVENTS_PER_TURN; e++) {
    for (const endpoint of bench.endpoints) {
      const { event, delivery } = eventAndDelivery(endpoint, clock, clock + 70_000);
      events.push(event);
      deliveries.push(delivery);
    }
  }
  return { events, deliveries };
}

const cpu = () => {
  const c = process.cpuUsage();
  return { user: c.user / 1000, system: c.system / 1000 };
};
let previous: NewDelivery[] = [];
const run = async (turns: number) => {
  for (let t = 0; t < turns; t++) {
    clock += 1;
    const { events, deliveries } = turnWork();
    const work: Promise<unknown>[] = [queue.enqueue(events, deliveries)];
    for (const d of previous) work.push(recordSuccess(queue, d, clock));
    await Promise.all(work);
    previous = deliveries;
  }
};
await run(Math.min(500, TURNS)); // warm-up: JIT, prepared statements, a table that is not empty
const before = cpu();
const started = performance.now();
await run(TURNS);
const wall = performance.now() - started;
const after = cpu();
const n = TURNS * EVENTS_PER_TURN * ACCOUNTS;
const per = (ms: number) => `${((ms * 1000) / n).toFixed(1)} µs`;
console.log(
  `store: ${n} deliveries in ${TURNS} turns of ${EVENTS_PER_TURN * ACCOUNTS}: ${(n / (wall / 1000)).toFixed(0)} deliveries/s; CPU per delivery ${per(after.user - before.user + after.system - before.system)} (user ${per(after.user - before.user)}, system ${per(after.system - before.system)}), wall ${per(wall)}`,
);
await bench.close();
