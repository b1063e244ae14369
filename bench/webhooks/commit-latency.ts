/**
 * How long the queue's commits take, one by one, at a steady rate: what an ingress ack waits for
 * in SQLite, without HTTP. Each millisecond one turn stores one upstream event of ACCOUNTS entries
 * (an event and a leased delivery per account) and records the attempts of the previous turn's
 * deliveries, through the store as the server opens it (the background checkpoint thread included).
 * Reports the distribution of those turns' commit times; the file system's stalls show in the tail.
 * Run: bun bench/webhooks/commit-latency.ts   (env TURNS, ACCOUNTS; DB_DIR, e.g. /dev/shm to compare
 * with memory; SQLITE_AUTOCHECKPOINT to set the server connection's automatic checkpoint, in pages)
 */
import { tmpdir } from "node:os";
import type { NewDelivery } from "../../src/store/queue.ts";
import { benchStore, eventAndDelivery, recordSuccess } from "./store-fixture.ts";

const TURNS = Number(process.env.TURNS ?? 10_000);
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 5);
const WARMUP_TURNS = 1_000;

const errors: string[] = [];
const bench = await benchStore(ACCOUNTS, {
  parent: process.env.DB_DIR,
  backgroundCheckpoints: {
    workerUrl: new URL("../../src/store/sqlite/checkpoint-worker.ts", import.meta.url).href,
    onError: (m) => errors.push(m),
  },
});
const sqlite = bench.store.db.$client;
if (process.env.SQLITE_AUTOCHECKPOINT)
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${Number(process.env.SQLITE_AUTOCHECKPOINT)}`);
const autocheckpoint = (sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number })
  .wal_autocheckpoint;

const commitMs: number[] = [];
let previous: NewDelivery[] = [];
const started = performance.now();
for (let turn = 0; turn < WARMUP_TURNS + TURNS; turn++) {
  const wait = started + turn - performance.now();
  if (wait > 0) await Bun.sleep(wait);
  const clock = Date.now();
  const rows = bench.endpoints.map((endpoint) => eventAndDelivery(endpoint, clock, clock + 70_000));
  const deliveries = rows.map((row) => row.delivery);
  const t0 = performance.now();
  await Promise.all([
    bench.store.queue.enqueue(
      rows.map((row) => row.event),
      deliveries,
    ),
    ...previous.map((d) => recordSuccess(bench.store.queue, d, clock)),
  ]);
  if (turn >= WARMUP_TURNS) commitMs.push(performance.now() - t0);
  previous = deliveries;
}
commitMs.sort((a, b) => a - b);
const at = (p: number) => `${commitMs[Math.min(commitMs.length - 1, Math.floor(p * commitMs.length))]!.toFixed(2)} ms`;
const wal = bench.walBytes();
console.log(
  `commit latency (${process.env.DB_DIR ?? tmpdir()}, server autocheckpoint ${autocheckpoint} pages): ${TURNS} turns of 1 event × ${ACCOUNTS} accounts + ${ACCOUNTS} attempts, 1 per ms`,
);
console.log(
  `  p50 ${at(0.5)}  p90 ${at(0.9)}  p99 ${at(0.99)}  p99.9 ${at(0.999)}  max ${at(1)}; over 1 ms: ${commitMs.filter((ms) => ms > 1).length}; WAL file ${(wal / 1e6).toFixed(1)} MB${errors.length ? `; checkpoint thread: ${errors.join("; ")}` : ""}`,
);
await bench.close();
