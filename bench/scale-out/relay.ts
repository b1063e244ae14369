/**
 * The webhook relay in the scale-out mode (issue 18): Switchboard instances on PostgreSQL + Redis.
 * Starts a PostgreSQL server of its own with the server's default settings (bench/support/
 * postgres-cluster.ts: autovacuum on, durable commits), the receiver (bench/webhooks/receiver.ts)
 * and one instance, then reports, in one run:
 *   floor      a bare INSERT + COMMIT round trip on one connection (p50/p99): the least a durable ack can cost,
 *              and the same events at RATE/s posted straight to the receiver: the sender's HTTP round trip;
 *   steady     events at RATE/s for SECONDS to one instance: ingress ack p50/p99 as the sender saw it, and
 *              its ratio to the two floors added up;
 *   one        events posted flat out (CONCURRENCY connections) to one instance: deliveries/s sustained;
 *   two        the same with a second instance, events posted alternately to both;
 *   recovery   an instance killed (SIGKILL) while its attempt is in flight, with another one alive: how
 *              long until the other attempts the same webhook-id; then the only instance killed the same
 *              way and started again on its port (the same instance id): how long from its start;
 * and for the flat phases PostgreSQL's CPU per delivery (its processes' CPU time, from /proc), and
 * the SQL statements, transactions and round trips it served per delivery (pg_stat_statements,
 * pg_stat_database), to size a cluster on paper.
 * Run: flock /tmp/switchboard-heavy.lock bun bench/scale-out/relay.ts
 *   (env RATE=500 SECONDS=10 ACCOUNTS=5 CONCURRENCY=64 WARMUP=5 override the defaults;
 *   PHASES=steady,one,two,recovery picks phases; PG_SETTINGS and PG_LOG are for profiling the server)
 */
import { SQL } from "bun";
import { join } from "node:path";
import { startPostgresCluster } from "../support/postgres-cluster.ts";
import {
  ackLine,
  BENCH_ADMIN,
  BENCH_APP_SECRET,
  benchEvent,
  fmt,
  flatOut,
  freePort,
  openLoop,
  pct,
  postEvent,
  setupAccounts,
  startReceiver,
  waitReady,
} from "../webhooks/load.ts";

const RATE = Number(process.env.RATE ?? 500);
const SECONDS = Number(process.env.SECONDS ?? 10);
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const WARMUP = Number(process.env.WARMUP ?? 5);
const ROOT = join(import.meta.dir, "..", "..");

// PG_SETTINGS (e.g. "auto_explain.log_min_duration=5 auto_explain.log_nested_statements=on") go to the server; PG_LOG keeps its log.
const cluster = await startPostgresCluster(freePort(), (process.env.PG_SETTINGS ?? "").split(" ").filter(Boolean));
const server = new SQL({ url: cluster.url, max: 2 });
await server.unsafe("CREATE EXTENSION pg_stat_statements");
await server.unsafe("CREATE DATABASE switchboard");
const databaseUrl = cluster.url.replace(/\/postgres$/, "/switchboard");
const receiver = await startReceiver();
const instances: { proc: Bun.Subprocess; base: string }[] = [];

/** Starts an instance, on `port` when given (a restart: the same instance id); resolves once it answers. */
async function startInstance(port = freePort()): Promise<string> {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      REDIS_URL: "redis://127.0.0.1:6379",
      REDIS_KEY_PREFIX: `switchboard-bench-${process.pid}:`,
      APP_SECRET: BENCH_APP_SECRET,
      ADMIN_TOKEN: BENCH_ADMIN,
      ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64"),
      DEV_MODE: "1",
      UPSTREAM_URL: "http://127.0.0.1:9",
      LOG_LEVEL: "warn",
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  instances.push({ proc, base });
  await waitReady(base);
  return base;
}

/** The durable-ack floor: one INSERT, committed (autocommit), per round trip, on one connection. */
async function floor(): Promise<{ p50: number; p99: number }> {
  const db = new SQL({ url: databaseUrl, max: 1 });
  await db.unsafe("CREATE TABLE bench_floor (id bigserial PRIMARY KEY, at bigint NOT NULL, body bytea)");
  const body = new Uint8Array(1500);
  const times: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const started = performance.now();
    await db.unsafe("INSERT INTO bench_floor (at, body) VALUES ($1, $2)", [Date.now(), body]);
    times.push(performance.now() - started);
  }
  await db.unsafe("DROP TABLE bench_floor");
  await db.close();
  times.sort((a, b) => a - b);
  console.log(`floor: a bare INSERT + COMMIT round trip, 3000 in a row on one connection`);
  console.log(
    `  commit round trip        p50 ${fmt(pct(times, 50))}  p99 ${fmt(pct(times, 99))}  max ${fmt(times.at(-1)!)}`,
  );
  return { p50: pct(times, 50), p99: pct(times, 99) };
}

/** The sender's own HTTP round trip: the same events at the same rate, straight to the receiver. */
async function httpFloor(): Promise<{ p50: number; p99: number }> {
  const { acks } = await openLoop(RATE, SECONDS, (i) =>
    postEvent(`${receiver.url}/reference`, 90_000_000 + i, ACCOUNTS),
  );
  console.log(`reference: the same ${RATE * SECONDS} events at ${RATE}/s posted straight to the receiver (no relay)`);
  console.log(ackLine("HTTP round trip", acks));
  const ms = acks.map((a) => a.acked - a.sent).sort((a, b) => a - b);
  return { p50: pct(ms, 50), p99: pct(ms, 99) };
}

/** CPU time (ms) so far of a process and, when `children`, of its child processes (PostgreSQL's backends). */
async function cpuMs(pid: number, children = false): Promise<number> {
  const { readdirSync } = await import("node:fs");
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await Bun.file(`/proc/${entry}/stat`).text();
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    if (Number(entry) === pid || (children && Number(fields[1]) === pid))
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  }
  return total;
}

/** The share of one core each part of the bench used since the call, and PostgreSQL's CPU per delivery. */
async function cpuSplit() {
  const postmaster = Number((await Bun.file(`${cluster.dataDir}/postmaster.pid`).text()).split("\n")[0]);
  const read = async () => ({
    postgres: await cpuMs(postmaster, true),
    switchboard: (await Promise.all(instances.map(({ proc }) => cpuMs(proc.pid)))).reduce((a, b) => a + b, 0),
    receiver: await cpuMs(receiver.proc.pid),
    sender: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    at: performance.now(),
  });
  const before = await read();
  return async (deliveries: number) => {
    const after = await read();
    const wall = after.at - before.at;
    const perDelivery = (name: "postgres" | "switchboard" | "receiver" | "sender") =>
      ((after[name] - before[name]) * 1000) / Math.max(1, deliveries);
    const part = (name: "postgres" | "switchboard" | "receiver" | "sender") =>
      `${name} ${(((after[name] - before[name]) / wall) * 100).toFixed(0)} % (${perDelivery(name).toFixed(0)} µs/delivery)`;
    return [
      `  PostgreSQL CPU           ${perDelivery("postgres").toFixed(0)} µs per delivery (every process of its server)`,
      `  CPU (share of one core)  ${part("postgres")}  ${part("switchboard")}  ${part("receiver")}  ${part("sender")}`,
    ].join("\n");
  };
}

/** PostgreSQL's own counts since the last call: statements (and their rows) and transactions committed. */
async function databaseCounts() {
  const [statements] = await server.unsafe(`SELECT COALESCE(SUM(calls), 0)::bigint AS calls FROM pg_stat_statements s
    JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'switchboard'`);
  const [commits] = await server.unsafe(
    "SELECT xact_commit::bigint AS commits FROM pg_stat_database WHERE datname = 'switchboard'",
  );
  return { statements: Number(statements.calls), commits: Number(commits.commits), updates: await tableUpdates() };
}

/** Rows updated so far per queue table, and how many of them were HOT (no index entry written). */
async function tableUpdates(): Promise<Map<string, { upd: number; hot: number }>> {
  const db = new SQL({ url: databaseUrl, max: 1 });
  const rows =
    await db.unsafe(`SELECT relname, n_tup_upd::bigint AS upd, n_tup_hot_upd::bigint AS hot FROM pg_stat_user_tables
    WHERE relname IN ('deliveries', 'due_deliveries', 'endpoint_slots', 'endpoint_due', 'endpoints', 'events')`);
  await db.close();
  return new Map(
    rows.map((r: { relname: string; upd: string; hot: string }) => [
      r.relname,
      { upd: Number(r.upd), hot: Number(r.hot) },
    ]),
  );
}

async function flatPhase(label: string, bases: string[]): Promise<void> {
  await server.unsafe("SELECT pg_stat_statements_reset()");
  await Bun.sleep(600); // pg_stat_database is sent by the backends at most every 500 ms
  const before = await databaseCounts();
  const arrivedBefore = await receiver.arrived();
  const cpu = await cpuSplit();
  const start = performance.now();
  const { events, sendSeconds } = await flatOut(CONCURRENCY, SECONDS, (i) =>
    postEvent(`${bases[i % bases.length]}/webhooks/upstream`, 10_000_000 * bases.length + i, ACCOUNTS),
  );
  const delivered = (await receiver.waitFor(arrivedBefore + events * ACCOUNTS, 120_000)) - arrivedBefore;
  const seconds = (performance.now() - start) / 1000;
  await Bun.sleep(600);
  const after = await databaseCounts();
  const per = (n: number) => (n / Math.max(1, delivered)).toFixed(2);
  console.log(
    `${label}: ${events} events acknowledged in ${sendSeconds.toFixed(1)} s (${(events / sendSeconds).toFixed(0)} events/s, ${CONCURRENCY} connections, ${ACCOUNTS} deliveries each)`,
  );
  console.log(
    `  delivered                ${delivered} of ${events * ACCOUNTS} in ${seconds.toFixed(1)} s = ${(delivered / seconds).toFixed(0)} deliveries/s sustained`,
  );
  console.log(
    `  per delivery             ${per(after.statements - before.statements)} SQL statements (each a round trip), ${per(after.commits - before.commits)} transactions (ingress's included)`,
  );
  console.log(await cpu(delivered));
  const hot = [...after.updates].map(([table, { upd, hot }]) => {
    const was = before.updates.get(table) ?? { upd: 0, hot: 0 };
    return `${table} ${per(upd - was.upd)} (${per(hot - was.hot)} HOT)`;
  });
  console.log(`  rows updated per delivery ${hot.join(", ")}`);
  const top =
    await server.unsafe(`SELECT calls::bigint AS calls, total_exec_time AS total, total_plan_time AS plan, rows::bigint AS rows, toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'switchboard' ORDER BY total_exec_time + total_plan_time DESC LIMIT ${Number(process.env.PGSS_TOP ?? 4)}`);
  for (const t of top)
    console.log(
      `    ${(Number(t.total) / 1000).toFixed(2).padStart(6)} s in ${String(t.calls).padStart(6)} calls (${(Number(t.total) / Number(t.calls)).toFixed(2)} ms each${Number(t.plan) > 0 ? ` + ${(Number(t.plan) / Number(t.calls)).toFixed(3)} ms planning` : ""}, ${t.rows} rows${t.toplevel ? "" : ", nested"}): ${t.query}`,
    );
  console.log(
    `  load average             ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`,
  );
}

/**
 * A receiver in this process that never answers until released, noting each request's webhook-id
 * and arrival: what an attempt in flight when its instance dies looks like.
 */
function holdingReceiver() {
  const arrivals: { webhookId: string; at: number }[] = [];
  const held: (() => void)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      await req.arrayBuffer();
      arrivals.push({ webhookId: req.headers.get("webhook-id") ?? "", at: performance.now() });
      await new Promise<void>((resolve) => held.push(resolve));
      return new Response("ok");
    },
  });
  /** The first request to arrive after `since` (a performance.now() time), of `webhookId` when given. */
  const arrived = async (since: number, webhookId?: string) => {
    const deadline = performance.now() + 120_000;
    for (;;) {
      const found = arrivals.find((a) => a.at >= since && (webhookId === undefined || a.webhookId === webhookId));
      if (found) return found;
      if (performance.now() > deadline) throw new Error("recovery: no attempt within 120 s");
      await Bun.sleep(5);
    }
  };
  return {
    url: `http://127.0.0.1:${server.port}`,
    arrived,
    stop() {
      for (const release of held.splice(0)) release();
      server.stop(true);
    },
  };
}

/** The recovery targets: another instance within 10 s of a death, the only one within 5 s of its restart. */
async function recoveryPhase(): Promise<void> {
  const hold = holdingReceiver();
  try {
    const [first] = instances;
    if (!first) throw new Error("recovery: no instance");
    // One more account, its endpoint on the holding receiver: its events go to that endpoint only.
    await setupAccounts(first.base, 1, hold.url, ACCOUNTS);
    const post = async (base: string, i: number) => {
      const { body, signature } = benchEvent(80_000_000 + i, 1, ACCOUNTS);
      const r = await fetch(`${base}/webhooks/upstream`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": signature },
        body,
      });
      if (r.status !== 200) throw new Error(`recovery: ingress answered ${r.status}`);
    };
    // Only two instances: the one whose attempt is in flight, and the one started after it that
    // takes it over once it has seen it beat.
    for (const { proc } of instances.splice(1)) proc.kill("SIGKILL");
    const victim = instances[0]!;
    const posted = performance.now();
    await post(victim.base, 1);
    const attempt = await hold.arrived(posted);
    const survivor = await startInstance();
    const seen = async () =>
      ((await (await fetch(`${survivor}/healthz`)).json()) as { instances: unknown[] }).instances;
    while ((await seen()).length < 2) await Bun.sleep(50);
    victim.proc.kill("SIGKILL");
    await victim.proc.exited;
    const died = performance.now();
    const again = await hold.arrived(died, attempt.webhookId);
    console.log("recovery: an instance killed (SIGKILL) with its attempt in flight, another one alive");
    console.log(
      `  attempted again by the other  ${((again.at - died) / 1000).toFixed(2)} s after the kill (target ≤ 10 s), with the same webhook-id`,
    );
    // Now the survivor is the only instance: kill it the same way, and start it again on its port.
    instances.splice(0, 1);
    const only = instances[0]!;
    const postedAgain = performance.now();
    await post(only.base, 2);
    const second = await hold.arrived(postedAgain);
    only.proc.kill("SIGKILL");
    await only.proc.exited;
    instances.splice(0, 1);
    const spawned = performance.now();
    await startInstance(Number(new URL(survivor).port));
    const answered = performance.now();
    const retried = await hold.arrived(spawned, second.webhookId);
    console.log("recovery: the only instance killed with its attempt in flight, and started again on its port");
    console.log(
      `  attempted again                ${((retried.at - spawned) / 1000).toFixed(2)} s after its start, ${((retried.at - answered) / 1000).toFixed(2)} s after its first /healthz 200 (target ≤ 5 s of listening), with the same webhook-id`,
    );
  } finally {
    hold.stop();
  }
}

try {
  const commit = await floor();
  const first = await startInstance();
  await setupAccounts(first, ACCOUNTS, receiver.url);
  if (WARMUP > 0) {
    const arrivedBefore = await receiver.arrived();
    await openLoop(RATE, WARMUP, (i) => postEvent(`${first}/webhooks/upstream`, 40_000_000 + i, ACCOUNTS));
    await receiver.waitFor(arrivedBefore + RATE * WARMUP * ACCOUNTS, 60_000);
  }
  const phases = (process.env.PHASES ?? "steady,one,two,recovery").split(",");
  if (phases.includes("steady")) {
    const http = await httpFloor();
    const arrivedBefore = await receiver.arrived();
    const steady = await openLoop(RATE, SECONDS, (i) => postEvent(`${first}/webhooks/upstream`, i, ACCOUNTS));
    const delivered = (await receiver.waitFor(arrivedBefore + RATE * SECONDS * ACCOUNTS, 60_000)) - arrivedBefore;
    console.log(`steady: ${RATE * SECONDS} events at ${RATE}/s to one instance, ${ACCOUNTS} deliveries each`);
    console.log(ackLine("ingress ack latency", steady.acks));
    const acked = steady.acks.map((a) => a.acked - a.sent).sort((a, b) => a - b);
    console.log(
      `  against the floors       p50 ${(pct(acked, 50) / (http.p50 + commit.p50)).toFixed(1)}×, p99 ${(pct(acked, 99) / (http.p99 + commit.p99)).toFixed(1)}× (HTTP round trip + commit round trip); p99 ${(pct(acked, 99) / commit.p99).toFixed(1)}× the commit alone`,
    );
    console.log(`  delivered                ${delivered} of ${RATE * SECONDS * ACCOUNTS}`);
  }
  if (phases.includes("one")) await flatPhase("one instance, flat out", [first]);
  if (phases.includes("two")) await flatPhase("two instances, flat out", [first, await startInstance()]);
  if (phases.includes("recovery")) await recoveryPhase();
} finally {
  for (const { proc } of instances) proc.kill();
  await Promise.all(instances.map(({ proc }) => proc.exited));
  receiver.proc.kill();
  await server.close();
  if (process.env.PG_LOG) Bun.spawnSync(["cp", cluster.logFile, process.env.PG_LOG]);
  cluster.stop();
  const redis = new Bun.RedisClient("redis://127.0.0.1:6379");
  const keys = (await redis.send("KEYS", [`switchboard-bench-${process.pid}:*`])) as string[];
  if (keys.length > 0) await redis.send("DEL", keys);
  redis.close();
}
