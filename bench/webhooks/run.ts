/**
 * Webhook relay benchmark (issue 4). Starts the real server (`bun src/main.ts serve`, SQLite, one
 * process) on a temporary database, gives it ACCOUNTS accounts with one endpoint each on a local
 * receiver, then:
 *   1. posts upstream events at a steady RATE per second for SECONDS; each event holds one entry
 *      per account, so it is split into ACCOUNTS deliveries. Reports ingress ack latency
 *      (p50/p99) as the sender saw it, the server's own share of it (its ack histogram in
 *      /metrics: from the handler's start, so without the sender's time nor the wait for the
 *      server's thread before the handler), how long the WAL flushes the acks waited for took (its
 *      /metrics too), ack-to-arrival at the receiver (p50/p99), deliveries/s, and the server's CPU
 *      and disk writes;
 *   2. posts as fast as CONCURRENCY connections allow for SECONDS and reports the sustained
 *      deliveries per second the receiver saw.
 * The receiver is a separate process (receiver.ts); each phase reports the CPU each process used.
 * Before both, a reference phase posts the same events at the same rate straight to the receiver:
 * the round trip with no relay in between, so a reader can tell how busy the machine was; then to
 * the receiver's /durable, which answers each once it is on disk and does nothing else: the floor
 * of the relay's ack on this machine's disk.
 * PHASES may also name "outage": the receiver answers 503 for OUTAGE_MS (1,000 by default) while
 * events come at RATE for SECONDS; reports how long after the outage every delivery had arrived
 * (the failed ones are retried 5 s later, beside the new traffic) and the ack latency meanwhile.
 * PHASES may also name "mixed" (issue 30): RATE events/s for SECONDS alone, then the same while wrk
 * drives the same server's proxy flat out (message sends to a fake upstream, bench/proxy/upstream.ts,
 * over NUMBERS numbers, with the request log on as by default); reports the ack latency of both, and
 * the second's p99 against the first's (target <= 1.5: the log no longer competes for the writer
 * that ingress waits for). Needs `wrk`. REQUEST_LOG=0 runs it with the log off: the floor, what
 * sharing two cores with the proxy costs the relay without the log.
 * PHASES may also name "platform" (issue 37): flat out as above, four rounds of SECONDS with every
 * endpoint set in turn to signature standard, platform, standard, platform (the same events, one
 * change per entry, so as many deliveries either way); reports each round's deliveries/s and the
 * platform rounds' against the standard ones' (target >= 0.90: splitting one change per delivery
 * and signing X-Hub-Signature-256 cost at most 10 %).
 * Before all, WARMUP seconds (10 by default) of events at RATE bring the server to its steady state.
 * Run: bun bench/webhooks/run.ts   (env RATE, SECONDS, ACCOUNTS, CONCURRENCY, WARMUP override the defaults;
 * PHASES lists the phases to run, e.g. PHASES=reference,steady; the default is reference, steady and flat; DB_DIR
 * is where the temporary database goes)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ackLine,
  BENCH_ADMIN,
  type BenchEndpoint,
  BENCH_APP_SECRET,
  flatOut as postFlatOut,
  fmt,
  freePort,
  openLoop as postOpenLoop,
  pct,
  postEvent,
  setSignature,
  setupAccounts,
  startReceiver,
  waitReady,
} from "./load.ts";
import { seedProxyLoad, wrk } from "../proxy/wrk.ts";

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 10);
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const WARMUP = Number(process.env.WARMUP ?? 10);
const OUTAGE_MS = Number(process.env.OUTAGE_MS ?? 1000);
const NUMBERS = Number(process.env.NUMBERS ?? 1000);
const PHASES = (process.env.PHASES ?? "reference,steady,flat").split(",");
const ROOT = join(import.meta.dir, "..", "..");

// DB_DIR puts the database on another file system (e.g. /dev/shm, to see what the disk costs).
const dir = mkdtempSync(join(process.env.DB_DIR ?? tmpdir(), "switchboard-bench-"));
const receiver = await startReceiver();
const receiverProc = receiver.proc;
const receiverUrl = receiver.url;
const arrivedCount = receiver.arrived;
const receiverStats = receiver.stats;
const waitArrivals = (target: number, timeoutMs: number) => receiver.waitFor(target, timeoutMs);
/** CPU time (ms) of the server process in user and kernel mode, from /proc. */
const serverCpuMs = async () => {
  const fields = (await Bun.file(`/proc/${server.pid}/stat`).text()).split(") ")[1]!.split(" ");
  return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 };
};
/** The server's CPU time (ms) split by thread: the main JS thread, Worker threads, and Bun's helpers (GC, JIT, pools). */
const serverThreadsMs = async () => {
  const split = { main: 0, worker: 0, other: 0 };
  const { readdirSync } = await import("node:fs");
  for (const tid of readdirSync(`/proc/${server.pid}/task`)) {
    let stat: string;
    try {
      stat = await Bun.file(`/proc/${server.pid}/task/${tid}/stat`).text();
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    if (Number(tid) === server.pid) split.main += ms;
    else if (name === "Worker") split.worker += ms;
    else split.other += ms;
  }
  return split;
};
/** Bytes the server process has had written to the disk so far (/proc/<pid>/io): its WAL, checkpoints and all. */
const serverDiskWrites = async () =>
  Number(/^write_bytes: (\d+)$/m.exec(await Bun.file(`/proc/${server.pid}/io`).text())![1]);
const selfCpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
/**
 * The machine's CPU time so far (all cores, in clock ticks), and the part the hypervisor gave to
 * other guests ("steal", /proc/stat): on a shared VM that part of a phase's time never reached it.
 */
const machineTicks = async () => {
  const fields = (await Bun.file("/proc/stat").text()).split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { total: fields.slice(0, 8).reduce((a, b) => a + b, 0), steal: fields[7]! };
};
/** Starts measuring; the function it gives prints the share of the machine's time stolen since. */
async function stealMeter() {
  const before = await machineTicks();
  return async () => {
    const after = await machineTicks();
    const stolen = (after.steal - before.steal) / Math.max(1, after.total - before.total);
    return `  CPU stolen by the host   ${(stolen * 100).toFixed(1)} % of the machine's time (above a few %, latencies measure the host, not the relay)`;
  };
}
const port = freePort();
const base = `http://127.0.0.1:${port}`;
// The mixed phase's proxied calls go to the proxy bench's fake upstream.
const upstreamPort = freePort();
const upstream = PHASES.includes("mixed")
  ? Bun.spawn([process.execPath, join(ROOT, "bench/proxy/upstream.ts")], {
      env: { PORT: String(upstreamPort) },
      stdout: "ignore",
      stderr: "inherit",
    })
  : null;
// SERVER_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") go to the server's bun.
const serverFlags = (process.env.SERVER_FLAGS ?? "").split(" ").filter(Boolean);
const server = Bun.spawn([process.execPath, ...serverFlags, join(ROOT, "src/main.ts"), "serve"], {
  cwd: ROOT,
  env: {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    PORT: String(port),
    HOST: "127.0.0.1",
    // BENCH_DATABASE_URL=postgres://… measures the scale-out mode (an empty database; Redis named too).
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `file:${join(dir, "bench.db")}`,
    ...(process.env.BENCH_DATABASE_URL?.startsWith("postgres")
      ? { REDIS_URL: "redis://127.0.0.1:6379", REDIS_KEY_PREFIX: "switchboard-bench:" }
      : {}),
    APP_SECRET: BENCH_APP_SECRET,
    ADMIN_TOKEN: BENCH_ADMIN,
    ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64"),
    DEV_MODE: "1",
    UPSTREAM_URL: `http://127.0.0.1:${upstream ? upstreamPort : 9}`,
    // Per-request info lines would measure the terminal, not the relay.
    LOG_LEVEL: "warn",
    REQUEST_LOG: process.env.REQUEST_LOG ?? "1",
    // JavaScriptCore's own switches (e.g. BUN_JSC_logGC=1) reach the server, to see its collector.
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith("BUN_JSC_"))),
  },
  stdout: "ignore",
  stderr: "inherit",
});

async function post(i: number, url = `${base}/webhooks/upstream`) {
  return postEvent(url, i, ACCOUNTS);
}

/** CPU used by each process over a phase, as a share of one core. */
async function cpuMeter(deliveries: () => number) {
  const before = {
    disk: await serverDiskWrites(),
    server: await serverCpuMs(),
    threads: await serverThreadsMs(),
    receiver: (await receiverStats()).cpuMs,
    sender: selfCpuMs(),
    steal: await stealMeter(),
    at: performance.now(),
  };
  return async () => {
    const wall = performance.now() - before.at;
    const share = (ms: number) => `${((ms / wall) * 100).toFixed(0)} %`;
    const receiver = (await receiverStats()).cpuMs;
    const after = await serverCpuMs();
    const user = after.user - before.server.user;
    const system = after.system - before.server.system;
    const server = user + system;
    const threads = await serverThreadsMs();
    const disk = (await serverDiskWrites()) - before.disk;
    const perDelivery = (ms: number) => `${((ms * 1000) / Math.max(1, deliveries())).toFixed(0)} µs`;
    return `  server CPU per delivery  ${perDelivery(server)} (ingress share included): main thread ${perDelivery(threads.main - before.threads.main)}, delivery worker ${perDelivery(threads.worker - before.threads.worker)}, Bun helper threads ${perDelivery(threads.other - before.threads.other)}; user ${perDelivery(user)}, kernel ${perDelivery(system)}\n  CPU (share of one core)  server ${share(server)}  receiver ${share(receiver - before.receiver)}  sender ${share(selfCpuMs() - before.sender)}  (load average ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")})\n  server disk writes       ${(disk / wall / 1000).toFixed(1)} MB/s, ${(disk / Math.max(1, deliveries()) / 1024).toFixed(1)} KB per delivery\n${await before.steal()}`;
  };
}

/** Posts events `first`… at RATE per second to ingress (or `url`). */
const openLoop = (first: number, url?: string, seconds = SECONDS) =>
  postOpenLoop(RATE, seconds, (i) => post(first + i, url));

async function reference(): Promise<void> {
  const steal = await stealMeter();
  const { acks } = await openLoop(30_000_000, `${receiverUrl}/reference`);
  const durable = await openLoop(31_000_000, `${receiverUrl}/durable`);
  console.log(
    `reference: the same ${RATE * SECONDS} events at ${RATE}/s posted straight to the receiver (no relay), then to its /durable`,
  );
  console.log(ackLine("round trip", acks));
  console.log(
    `${ackLine("durable round trip", durable.acks)}  (appended and flushed to disk before the answer, nothing else)`,
  );
  console.log(await steal());
}

/** Cumulative counts of one of the server's histograms in /metrics, by upper bound in ms. */
async function serverBuckets(metric: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(new RegExp(`^${metric}_bucket\\{le="([^"]+)"\\} (\\d+)$`, "gm"))) {
    buckets.set(m[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[1]) * 1000, Number(m[2]));
  }
  return buckets;
}

/**
 * The share of this phase's observations of a server histogram within each bound: the ack as the
 * server timed it (without the sender's time), and the WAL flushes the acks waited for.
 */
async function serverHistogramMeter(metric: string, label: string, what: string) {
  const before = await serverBuckets(metric);
  return async () => {
    const after = await serverBuckets(metric);
    const delta = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
    const all = delta(Number.POSITIVE_INFINITY);
    const shares = [1, 2, 5, 10].map((ms) => `≤ ${ms} ms ${((delta(ms) / Math.max(1, all)) * 100).toFixed(2)} %`);
    return `  ${label.padEnd(25)}${shares.join("  ")}  (of ${all}; ${what}, ${metric})`;
  };
}

async function steady(): Promise<void> {
  const total = RATE * SECONDS;
  const serverAcks = await serverHistogramMeter(
    "switchboard_webhook_ack_seconds",
    "server-side ack",
    "handler start to 200 ready",
  );
  const walSyncs = await serverHistogramMeter(
    "switchboard_wal_sync_seconds",
    "WAL flushes",
    "fdatasync start to its outcome on the server's thread",
  );
  const arrivedBefore = await arrivedCount();
  let delivered = 0;
  const cpu = await cpuMeter(() => delivered);
  const { acks, start, sendSeconds } = await openLoop(0);
  delivered = (await waitArrivals(arrivedBefore + total * ACCOUNTS, 30_000)) - arrivedBefore;
  const spanSeconds = (performance.now() - start) / 1000;
  const cpuLine = await cpu();
  const { arrivals } = await receiverStats();
  const toArrival: number[] = [];
  for (let i = 0; i < total; i++) for (const at of arrivals[i] ?? []) toArrival.push(at - acks[i]!.acked);
  toArrival.sort((a, b) => a - b);
  console.log(
    `steady: ${total} events at ${RATE}/s over ${sendSeconds.toFixed(1)} s, ${ACCOUNTS} accounts each (${total * ACCOUNTS} deliveries)`,
  );
  console.log(ackLine("ingress ack latency", acks));
  console.log(await serverAcks());
  console.log(await walSyncs());
  console.log(
    `  ack to arrival           p50 ${fmt(pct(toArrival, 50))}  p99 ${fmt(pct(toArrival, 99))}  (negative = arrived before the ack reached the sender)`,
  );
  console.log(
    `  delivered                ${delivered} of ${total * ACCOUNTS} in ${spanSeconds.toFixed(1)} s = ${(delivered / spanSeconds).toFixed(0)} deliveries/s`,
  );
  console.log(cpuLine);
}

async function outage(): Promise<void> {
  const total = RATE * SECONDS;
  const arrivedBefore = await arrivedCount();
  let delivered = 0;
  const cpu = await cpuMeter(() => delivered);
  await fetch(`${receiverUrl}/outage?ms=${OUTAGE_MS}`);
  const outageEnds = performance.now() + OUTAGE_MS;
  const { acks, start } = await openLoop(50_000_000);
  delivered = (await waitArrivals(arrivedBefore + total * ACCOUNTS, 120_000)) - arrivedBefore;
  const allIn = performance.now();
  console.log(
    `outage: the receiver answered 503 for the first ${OUTAGE_MS} ms of ${total} events at ${RATE}/s over ${SECONDS} s, ${ACCOUNTS} accounts each`,
  );
  console.log(ackLine("ingress ack latency", acks));
  console.log(
    `  delivered                ${delivered} of ${total * ACCOUNTS}; the last ${((allIn - outageEnds) / 1000).toFixed(1)} s after the outage ended (${((allIn - start) / 1000).toFixed(1)} s after the first event)`,
  );
  console.log(await cpu());
}

/** Ingress's acks at RATE alone, then beside the proxy served flat out (see PHASES "mixed"). */
async function mixed(script: string): Promise<void> {
  const total = RATE * SECONDS;
  const atRate = async (first: number) => {
    const arrivedBefore = await arrivedCount();
    const { acks } = await openLoop(first);
    await waitArrivals(arrivedBefore + total * ACCOUNTS, 60_000);
    return acks;
  };
  const p99 = (acks: { sent: number; acked: number }[]) =>
    pct(
      acks.map((a) => a.acked - a.sent).sort((a, b) => a - b),
      99,
    );
  const alone = await atRate(70_000_000);
  // wrk starts first and ends after the events: they all meet a proxy at full speed.
  const proxy = wrk(base, script, SECONDS + 3);
  await Bun.sleep(1_500);
  const beside = await atRate(71_000_000);
  const proxied = await proxy;
  console.log(
    `mixed: ${total} events at ${RATE}/s, ${ACCOUNTS} accounts each, alone and then while the proxy served flat out (request log ${process.env.REQUEST_LOG === "0" ? "off" : "on"})`,
  );
  console.log(ackLine("ack, the relay alone", alone));
  console.log(ackLine("ack, beside the proxy", beside));
  console.log(`  p99 beside / alone       ${(p99(beside) / p99(alone)).toFixed(2)}   (target <= 1.5)`);
  console.log(
    `  the proxy meanwhile      ${proxied.rps.toFixed(0)} req/s, p99 ${fmt(proxied.p99)}${proxied.errors ? `; ${proxied.errors}` : ""}`,
  );
}

/** Posts flat out for SECONDS from event `first` on and waits for every delivery of what was acknowledged. */
async function flatRound(first: number) {
  const arrivedBefore = await arrivedCount();
  let delivered = 0;
  const cpu = await cpuMeter(() => delivered);
  const start = performance.now();
  const { events, sendSeconds } = await postFlatOut(CONCURRENCY, SECONDS, (i) => post(first + i));
  delivered = (await waitArrivals(arrivedBefore + events * ACCOUNTS, 60_000)) - arrivedBefore;
  const seconds = (performance.now() - start) / 1000;
  return { events, sendSeconds, delivered, seconds, perSecond: delivered / seconds, cpu: await cpu() };
}

async function flatOut(): Promise<void> {
  const r = await flatRound(10_000_000);
  console.log(
    `flat out: ${r.events} events acknowledged in ${r.sendSeconds.toFixed(1)} s (${(r.events / r.sendSeconds).toFixed(0)} events/s, ${CONCURRENCY} connections)`,
  );
  console.log(
    `  delivered                ${r.delivered} of ${r.events * ACCOUNTS} in ${r.seconds.toFixed(1)} s = ${r.perSecond.toFixed(0)} deliveries/s sustained`,
  );
  console.log(r.cpu);
}

async function platformRounds(endpoints: BenchEndpoint[]): Promise<void> {
  const totals = { standard: { delivered: 0, seconds: 0 }, platform: { delivered: 0, seconds: 0 } };
  console.log(
    `platform: flat out, ${CONCURRENCY} connections, ${SECONDS} s a round, ${ACCOUNTS} accounts an event; every endpoint standard, then platform, in turn`,
  );
  for (const [round, signature] of (["standard", "platform", "standard", "platform"] as const).entries()) {
    await setSignature(base, endpoints, signature);
    const r = await flatRound(80_000_000 + round * 10_000_000);
    totals[signature].delivered += r.delivered;
    totals[signature].seconds += r.seconds;
    console.log(
      `  round ${round + 1} ${signature.padEnd(9)}${r.delivered} of ${r.events * ACCOUNTS} in ${r.seconds.toFixed(1)} s = ${r.perSecond.toFixed(0)} deliveries/s`,
    );
    console.log(r.cpu);
  }
  const rate = (t: { delivered: number; seconds: number }) => t.delivered / t.seconds;
  console.log(
    `  standard ${rate(totals.standard).toFixed(0)} deliveries/s, platform ${rate(totals.platform).toFixed(0)}: platform / standard ${(rate(totals.platform) / rate(totals.standard)).toFixed(3)}   (target >= 0.90)`,
  );
}

try {
  await waitReady(base);
  const endpoints = await setupAccounts(base, ACCOUNTS, receiverUrl);
  // Warm-up: connections, prepared statements, and the JIT, whose compiler thread takes 10-17 % of
  // a core for the first ~10 s of load at 1,000 events/s (bench/RESULTS.md).
  for (let i = 0; i < 200; i++) await post(20_000_000 + i);
  if (WARMUP > 0) {
    const arrivedBefore = await arrivedCount();
    await openLoop(40_000_000, undefined, WARMUP);
    await waitArrivals(arrivedBefore + RATE * WARMUP * ACCOUNTS, 60_000);
  }
  await Bun.sleep(500);
  const proxyScript = join(dir, "load.lua");
  if (PHASES.includes("mixed")) {
    await seedProxyLoad(base, BENCH_ADMIN, NUMBERS, proxyScript);
    await wrk(base, proxyScript, 2); // the proxy's warm-up
  }
  if (PHASES.includes("reference")) await reference();
  if (PHASES.includes("steady")) await steady();
  if (PHASES.includes("flat")) await flatOut();
  if (PHASES.includes("platform")) await platformRounds(endpoints);
  if (PHASES.includes("outage")) await outage();
  if (PHASES.includes("mixed")) await mixed(proxyScript);
} finally {
  server.kill();
  await server.exited;
  receiverProc.kill();
  upstream?.kill();
  rmSync(dir, { recursive: true, force: true });
}
