/**
 * The scale-out mode's rate-limit decision (issue 18): src/limits/redis/bucket.lua on the Redis at
 * REDIS_URL (127.0.0.1:6379 by default), as the proxy asks for it: one at a time (the round trip a
 * proxied call waits for) and CONCURRENCY at a time (the decisions of one event-loop turn go as one
 * EVALSHA), over 1,000 buckets; with the Redis server's own CPU per decision when it runs here.
 * Run: flock /tmp/switchboard-heavy.lock bun bench/scale-out/redis.ts   (env N=20000 CONCURRENCY=50)
 */
import { RedisClient } from "bun";
import { readFileSync } from "node:fs";
import { numberBucket } from "../../src/limits/policy.ts";
import { RedisLimiter } from "../../src/limits/redis/limiter.ts";
import { systemClock } from "../../src/runtime/clock.ts";

const URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const N = Number(process.env.N ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const prefix = `switchboard-bench-${process.pid}:`;
const limiter = new RedisLimiter({ url: URL, keyPrefix: prefix, clock: systemClock });
const buckets = Array.from({ length: 1000 }, (_, i) =>
  numberBucket({ phoneNumberId: String(i), kind: "embedded", throughputLevel: "HIGH" }),
);
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

for (let i = 0; i < 1000; i++) await limiter.take(buckets[i % buckets.length]!);
const one: number[] = [];
for (let i = 0; i < N; i++) {
  const started = performance.now();
  await limiter.take(buckets[i % buckets.length]!);
  one.push(performance.now() - started);
}
one.sort((a, b) => a - b);
console.log(`one at a time: ${N} decisions, p50 ${pct(one, 50).toFixed(3)} ms, p99 ${pct(one, 99).toFixed(3)} ms`);

const redisPid =
  Number(Bun.spawnSync(["pidof", "redis-server"], { stdout: "pipe" }).stdout.toString().trim().split(" ")[0]) ||
  undefined;
/** The Redis server's CPU seconds so far (user + system), when it runs on this machine. */
const redisCpu = () => {
  if (!redisPid || !URL.includes("127.0.0.1")) return NaN;
  const fields = readFileSync(`/proc/${redisPid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const redisBefore = redisCpu();
const cpu = process.cpuUsage();
const started = performance.now();
let next = 0;
const latencies: number[] = [];
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < N) {
      const at = performance.now();
      await limiter.take(buckets[next++ % buckets.length]!);
      latencies.push(performance.now() - at);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
latencies.sort((a, b) => a - b);
console.log(
  `${CONCURRENCY} at a time: ${(N / seconds).toFixed(0)} decisions/s, p50 ${pct(latencies, 50).toFixed(3)} ms, p99 ${pct(latencies, 99).toFixed(3)} ms, ${((used.user + used.system) / N).toFixed(1)} µs client CPU and ${(((redisCpu() - redisBefore) * 1e6) / N).toFixed(1)} µs Redis server CPU per decision`,
);

limiter.close();
const raw = new RedisClient(URL);
const keys = (await raw.send("KEYS", [`${prefix}*`])) as string[];
if (keys.length > 0) await raw.send("DEL", keys);
raw.close();
