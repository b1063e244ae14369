/**
 * Backup benchmark (issue 28). Grows a SQLite database to SIZE_MB (fixture.ts), starts the real
 * server on it (`bun src/main.ts serve`) with a local webhook receiver (bench/webhooks/receiver.ts)
 * and a fake upstream (bench/proxy/upstream.ts), and keeps two loads going throughout:
 *   - upstream events posted at RATE per second (open loop, one delivery each), timing each ack;
 *   - message sends through the proxy from PROXY_CONCURRENCY loops in a process of their own
 *     (proxy-load.ts), spread over PROXY_NUMBERS numbers so that no bucket limits them.
 * After WARMUP seconds it measures WINDOW seconds without a backup, then takes one (POST
 * /admin/backups?wait=false, then its manifest polled every second, as a script would: on a busy
 * machine a backup may outlast an HTTP connection's idle time) and measures until it is verified
 * and stored, then
 * WINDOW seconds without again. Reports the backup's time and size, the relay's ack p50/p99 and
 * the proxy's req/s in each window (the target: ack p99 during at most 2× without), and
 * how large the WAL grew while the backup's snapshot held its read transaction.
 * The backup itself runs in a process of its own below the server's priority (src/backup/child.ts).
 * The load average is printed before the database grows, before the load starts and at the end, and
 * the last line is the row of bench/RESULTS.md's top table, ready to paste.
 * Run: bun bench/backup/run.ts   (SIZE_MB=1024 RATE=1000 WINDOW=15 WARMUP=5 PROXY_CONCURRENCY=8
 * PROXY_NUMBERS=200 by default; DB_DIR is where the temporary database and backups go)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BENCH_ADMIN,
  BENCH_APP_SECRET,
  epochNow,
  fmt,
  freePort,
  pct,
  postEvent,
  setupAccounts,
  startReceiver,
  waitReady,
  type Ack,
} from "../webhooks/load.ts";
import { growDatabase } from "./fixture.ts";

const SIZE_MB = Number(process.env.SIZE_MB ?? 1024);
const RATE = Number(process.env.RATE ?? 1000);
const WINDOW = Number(process.env.WINDOW ?? 15);
const WARMUP = Number(process.env.WARMUP ?? 5);
const PROXY_CONCURRENCY = Number(process.env.PROXY_CONCURRENCY ?? 8);
const PROXY_NUMBERS = Number(process.env.PROXY_NUMBERS ?? 200);
const ROOT = join(import.meta.dir, "..", "..");
/** Acks slower than this at the median before the backup: the relay was not keeping up (a queue, not a latency). */
const OVERLOADED_P50_MS = 100;
const KEY = new Uint8Array(32).fill(3);

/** The 1, 5 and 15 minute load averages, as /proc/loadavg gives them. */
const loadAverage = async () => (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
const loadAtStart = await loadAverage();
console.log(`load average at the start: ${loadAtStart} (${navigator.hardwareConcurrency} cores)`);

const dir = mkdtempSync(join(process.env.DB_DIR ?? tmpdir(), "switchboard-backup-bench-"));
const dbPath = join(dir, "switchboard.db");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

console.log(`growing the database to ${SIZE_MB} MB…`);
const grown = performance.now();
const rows = await growDatabase(dbPath, SIZE_MB, KEY);
console.log(
  `  ${rows.toLocaleString("en")} delivered events, ${mb(Bun.file(dbPath).size)}, in ${seconds(performance.now() - grown)}`,
);

/** A child process whose first stdout line is "listening <port>". */
async function child(cmd: string[]): Promise<{ proc: ReturnType<typeof Bun.spawn>; port: number }> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
  reader.releaseLock();
  return { proc, port: Number(/listening (\d+)/.exec(text)![1]) };
}

const upstream = await child([process.execPath, "bench/proxy/upstream.ts"]);
const receiver = await startReceiver();
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const server = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: `file:${dbPath}`,
    APP_SECRET: BENCH_APP_SECRET,
    ADMIN_TOKEN: BENCH_ADMIN,
    ENCRYPTION_KEY: Buffer.from(KEY).toString("base64"),
    DEV_MODE: "1",
    UPSTREAM_URL: `http://127.0.0.1:${upstream.port}`,
    BACKUP_TO: join(dir, "backups"),
    LOG_LEVEL: "warn",
  },
  stdout: "inherit",
  stderr: "inherit",
});
await waitReady(base);
await setupAccounts(base, 1, receiver.url);

// The proxy's account: its numbers (synced from the fake upstream, so on the standard 80/s level) and a live key.
const adminCall = async (path: string, body: unknown) =>
  (await (
    await fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${BENCH_ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    })
  ).json()) as Record<string, string>;
const proxyAccount = await adminCall("/admin/accounts", { name: "Proxy", email: "proxy@example.com" });
await adminCall(`/admin/accounts/${proxyAccount.id}/wabas`, { waba_id: "waba_proxy", access_token: "t" });
const numbers = Array.from({ length: PROXY_NUMBERS }, (_, n) => `pp${n}`);
for (const number of numbers)
  await adminCall(`/admin/accounts/${proxyAccount.id}/numbers`, {
    phone_number_id: number,
    waba_id: "waba_proxy",
    kind: "embedded",
  });
const { key } = await adminCall(`/admin/accounts/${proxyAccount.id}/api-keys`, { mode: "live" });

const loadBeforeLoad = await loadAverage();
console.log(`load average before the load starts: ${loadBeforeLoad}`);

// The loads, kept up until the end.
const proxySamples: { at: number; answers: number; errors: number }[] = [];
const proxy = Bun.spawn(
  [process.execPath, join(import.meta.dir, "proxy-load.ts"), base, key!, String(PROXY_CONCURRENCY), ...numbers],
  { stdout: "pipe", stderr: "inherit" },
);
void (async () => {
  let rest = "";
  const reader = proxy.stdout.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    rest += new TextDecoder().decode(chunk.value);
    const lines = rest.split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      const [at, answers, errors] = line.split(" ").map(Number);
      proxySamples.push({ at: at!, answers: answers!, errors: errors! });
    }
  }
})();
const acks: Ack[] = [];
let eventErrors = 0;
let sending = true;
const events = (async () => {
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; sending; i++) {
    const wait = start + (i * 1000) / RATE - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    pending.push(
      postEvent(`${base}/webhooks/upstream`, i, 1).then(
        (ack) => void acks.push(ack),
        () => void eventErrors++,
      ),
    );
  }
  await Promise.all(pending);
})();
const walSamples: { at: number; bytes: number }[] = [];
const walTimer = setInterval(() => walSamples.push({ at: epochNow(), bytes: Bun.file(`${dbPath}-wal`).size }), 20);

await Bun.sleep(WARMUP * 1000);
const marks = { before: epochNow(), backup: 0, done: 0, after: 0 };
await Bun.sleep(WINDOW * 1000);
marks.backup = epochNow();
const started = await fetch(`${base}/admin/backups?wait=false`, {
  method: "POST",
  headers: { authorization: `Bearer ${BENCH_ADMIN}` },
});
if (started.status !== 202) throw new Error(`the backup did not start: ${started.status} ${await started.text()}`);
const { manifest: manifestPath } = (await started.json()) as { manifest: string };
/** When each step of the backup was first seen (polled every 250 ms). */
const steps: { step: string; at: number }[] = [];
let answer: Response;
for (;;) {
  answer = await fetch(`${base}${manifestPath}`, { headers: { authorization: `Bearer ${BENCH_ADMIN}` } });
  if (answer.status !== 202) break;
  const { step } = (await answer.json()) as { step: string };
  if (steps.at(-1)?.step !== step) steps.push({ step, at: epochNow() });
  await Bun.sleep(250);
}
marks.done = epochNow();
const manifest = (await answer.json()) as { name?: string; bytes?: number; error?: unknown };
await Bun.sleep(WINDOW * 1000);
marks.after = epochNow();

sending = false;
await events;
clearInterval(walTimer);
const metrics = await (await fetch(`${base}/metrics`)).text();
for (const proc of [proxy, server, upstream.proc, receiver.proc]) proc.kill("SIGTERM");

if (answer.status !== 200) throw new Error(`the backup failed: ${answer.status} ${JSON.stringify(manifest)}`);
const windows = [
  ["without (before)", marks.before, marks.backup],
  ["during the backup", marks.backup, marks.done],
  ["without (after)", marks.done, marks.after],
] as const;

/** Answers counted by the proxy loads between two times, from the samples on either side. */
const proxyRate = (from: number, to: number) => {
  const at = (t: number) => proxySamples.reduce((best, s) => (Math.abs(s.at - t) < Math.abs(best.at - t) ? s : best));
  const [a, b] = [at(from), at(to)];
  return { rps: ((b.answers - a.answers) * 1000) / (b.at - a.at), errors: b.errors - a.errors };
};
const walPeak = (from: number, to: number) =>
  Math.max(0, ...walSamples.filter((s) => s.at >= from && s.at <= to).map((s) => s.bytes));
const serverDuration = Number(/^switchboard_backup_last_duration_seconds (\S+)$/m.exec(metrics)?.[1]);

console.log(
  `\nbackup of a ${mb(Bun.file(dbPath).size)} database while serving: ${seconds(marks.done - marks.backup)} (the server's own count: ${serverDuration.toFixed(1)} s), ` +
    `stored ${mb(manifest.bytes!)} (${((manifest.bytes! / Bun.file(dbPath).size) * 100).toFixed(0)} %) as ${manifest.name}`,
);
console.log(`\nrelay acks at ${RATE}/s (sender's view)          p50        p99        max      acks  WAL peak`);
const p99: number[] = [];
for (const [label, from, to] of windows) {
  const ms = acks
    .filter((a) => a.sent >= from && a.sent < to)
    .map((a) => a.acked - a.sent)
    .sort((x, y) => x - y);
  p99.push(pct(ms, 99));
  console.log(
    `  ${label.padEnd(40)} ${fmt(pct(ms, 50)).padStart(10)} ${fmt(pct(ms, 99)).padStart(10)} ${fmt(ms.at(-1)!).padStart(10)} ${String(ms.length).padStart(9)}  ${mb(walPeak(from, to))}`,
  );
}
// The backup's steps, each its own window (snapshot at nice 10; verify and compress at 19; upload in the server).
for (const [i, { step, at }] of steps.entries()) {
  const to = steps[i + 1]?.at ?? marks.done;
  const ms = acks
    .filter((a) => a.sent >= at && a.sent < to)
    .map((a) => a.acked - a.sent)
    .sort((x, y) => x - y);
  if (ms.length === 0) continue;
  console.log(
    `    step ${step.padEnd(35)} ${fmt(pct(ms, 50)).padStart(10)} ${fmt(pct(ms, 99)).padStart(10)} ${fmt(ms.at(-1)!).padStart(10)} ${String(ms.length).padStart(9)}  ${mb(walPeak(at, to))}  (${seconds(to - at)})`,
  );
}
console.log(
  `  p99 during / without (before): ${(p99[1]! / p99[0]!).toFixed(2)}×, / without (after): ${(p99[1]! / p99[2]!).toFixed(2)}×  (target: at most 2×); ingress errors: ${eventErrors}`,
);
console.log(`\nproxy, ${PROXY_CONCURRENCY} loops over ${PROXY_NUMBERS} numbers          req/s     errors`);
const rps: number[] = [];
for (const [label, from, to] of windows) {
  const { rps: rate, errors } = proxyRate(from, to);
  rps.push(rate);
  console.log(`  ${label.padEnd(40)} ${rate.toFixed(0).padStart(8)} ${String(errors).padStart(10)}`);
}
console.log(
  `  req/s during / without (before): ${(rps[1]! / rps[0]!).toFixed(2)}, / without (after): ${(rps[1]! / rps[2]!).toFixed(2)}`,
);
const loadAtEnd = await loadAverage();
console.log(`\nload average: ${loadAtEnd} (at the start ${loadAtStart}, before the load ${loadBeforeLoad})`);

// The top table's row of bench/RESULTS.md, to paste over the one there.
const ackRatio = p99[1]! / p99[0]!;
const proxyRatio = rps[1]! / rps[0]!;
// A relay that does not keep up without a backup queues its acks: they wait longer the longer the
// run, whatever else happens, and no ratio of this run says anything about the backup.
const before = acks.filter((a) => a.sent >= marks.before && a.sent < marks.backup).map((a) => a.acked - a.sent);
const overloaded =
  pct(
    before.sort((x, y) => x - y),
    50,
  ) > OVERLOADED_P50_MS;
if (overloaded) {
  console.log(
    `\nthe relay did not keep up at ${RATE} events/s without a backup (ack p50 over ${OVERLOADED_P50_MS} ms): the machine is too busy for this run to measure the backup; run it again when it is quiet`,
  );
}
const met = overloaded
  ? "no measure: the machine was overloaded"
  : ackRatio <= 2 && proxyRatio >= 0.7
    ? "met"
    : "not met";
const when = new Date().toISOString().slice(0, 16).replace("T", " ");
console.log(
  `\n| backup of a 1 GB database while serving: relay ack p99 during ≤ 2× without, proxy req/s during ≥ 0.7× without (same run) | ${when} UTC, load ${loadBeforeLoad.split(" ")[0]} before the load (${loadAtStart.split(" ")[0]} at the start): **ack p99 ${ackRatio.toFixed(2)}× (${fmt(p99[1]!)} during, ${fmt(p99[0]!)} before), proxy ${proxyRatio.toFixed(2)}× (${rps[1]!.toFixed(0)} against ${rps[0]!.toFixed(0)} req/s): ${met}**; ${mb(Bun.file(dbPath).size)} backed up in ${seconds(marks.done - marks.backup)}, stored ${mb(manifest.bytes!)}; WAL peak ${mb(walPeak(marks.backup, marks.done))} | \`bun bench/backup/run.ts\` (Backups) |`,
);
await server.exited;
rmSync(dir, { recursive: true, force: true });
