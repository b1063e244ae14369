#!/usr/bin/env bun
/**
 * Proxy benchmark (issue 3): one run, one machine, one load generator (wrk, 50 connections),
 * one fake upstream (bench/proxy/upstream.ts). Rows:
 *   (a) the upstream directly  (b) nginx proxy_pass with keep-alive
 *   (c) a bare Bun fetch pass-through  (d) Switchboard (src/main.ts serve) with every check on,
 *       message POSTs spread over NUMBERS numbers so none passes its 80/s bucket
 *   (e) a second Switchboard, the same but with OpenTelemetry traces on, exporting every call's
 *       spans over OTLP/HTTP to a collector stand-in (bench/proxy/collector.ts); its own database
 *   (f) a third, keeping SAMPLED (0.1) of the traces (OTEL_TRACES_SAMPLER=parentbased_traceidratio)
 *   (p) a fourth in the scale-out mode: state on a PostgreSQL server of its own, rate limits in Redis
 *   (q) a fifth with the request log off (REQUEST_LOG=0); (d) keeps it, as by default.
 * Then the RSS a 100 MB upload adds to a fresh Switchboard process (chunked and declared).
 *
 *   bun bench/proxy/run.ts            (BENCH_SECONDS=10 ROUNDS=2 NUMBERS=1000 SAMPLED=0.1 by default)
 * Needs `wrk`, `nginx` and `curl` (Debian: apt-get install -y wrk nginx curl).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { logFootprint } from "./request-log.ts";
import { startScaleOutBacking } from "./scale-out.ts";

const ROOT = resolve(import.meta.dir, "../..");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const NUMBERS = Number(process.env.NUMBERS ?? 1000);
const CONNECTIONS = 50;
/** Which rows to run (default all): e.g. ROWS=cd while working on Switchboard's own cost, ROWS=de for the cost of tracing. */
const ROWS = process.env.ROWS ?? "abcdefpq";
const UPLOADS = process.env.UPLOADS !== "0";
/** The share of traces row (f) keeps (OTEL_TRACES_SAMPLER=parentbased_traceidratio). */
const SAMPLED = Number(process.env.SAMPLED ?? 0.1);
const ADMIN_TOKEN = "bench-admin-token";
const work = mkdtempSync(join(tmpdir(), "switchboard-bench-"));
const children: Subprocess[] = [];
const cleanups: (() => Promise<void>)[] = [];

async function freePort(): Promise<number> {
  const socket = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = socket.port;
  socket.stop(true);
  return port;
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await Bun.sleep(50);
    }
  }
  throw new Error(`nothing answered at ${url}`);
}

function start(cmd: string[], env: Record<string, string> = {}): Subprocess {
  // (pids of the servers are read from here for the CPU column)
  const child = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: "ignore", stderr: "inherit" });
  children.push(child);
  return child;
}

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Runs `work` while sampling a process's RSS every 20 ms; returns its result and the peak seen (MB). */
async function sampling<T>(pid: number, task: Promise<T>): Promise<{ result: T; peakMb: number }> {
  let peak = status(pid, "VmRSS");
  const timer = setInterval(() => (peak = Math.max(peak, status(pid, "VmRSS"))), 20);
  const result = await task;
  clearInterval(timer);
  return { result, peakMb: Math.max(peak, status(pid, "VmRSS")) };
}

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: string | null;
  requests: number;
  cpuUsPerRequest: number;
}

/** CPU seconds (user + system) used so far by a process and its children's threads (nginx's worker). */
function cpuSeconds(pid: number): number {
  const ticks = (p: number) => {
    const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  let total = ticks(pid);
  for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean))
    total += ticks(Number(child));
  return total / 100;
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text)!;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
}

async function wrk(url: string, script: string, seconds = SECONDS, serverPid?: number): Promise<WrkResult> {
  const cpuBefore = serverPid ? cpuSeconds(serverPid) : 0;
  const child = Bun.spawn(["wrk", "-t2", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-s", script, url], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(child.stdout).text();
  await child.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const cpuUsPerRequest = serverPid ? ((cpuSeconds(serverPid) - cpuBefore) * 1e6) / requests : NaN;
  const errors = /Non-2xx or 3xx responses: \d+|Socket errors:.*/.exec(out)?.[0] ?? null;
  return {
    rps,
    p50: ms(/ 50%\s+(\S+)/.exec(out)![1]!),
    p99: ms(/ 99%\s+(\S+)/.exec(out)![1]!),
    errors,
    requests,
    cpuUsPerRequest,
  };
}

/** Waits until a collector stand-in has received nothing new for 1.5 s (the exporter sends at least once a second while it has spans). */
async function drained(stats: () => Promise<{ spans: number }>): Promise<void> {
  let last = -1;
  for (let spans = (await stats()).spans; spans !== last; spans = (await stats()).spans) {
    last = spans;
    await Bun.sleep(1500);
  }
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<{ id: string; key: string }> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: string; key: string };
}

async function startSwitchboard(
  upstreamPort: number,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: Subprocess }> {
  const port = await freePort();
  const child = start([process.execPath, "src/main.ts", "serve"], {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: databaseUrl,
    UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
    APP_SECRET: "bench-app-secret",
    ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64"),
    ADMIN_TOKEN,
    DEV_MODE: "0",
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/healthz`);
  return { url, child };
}

/** One account, one live key, one WABA, NUMBERS numbers, all through the operator API. */
async function seed(base: string): Promise<{ key: string; numbers: string[] }> {
  const account = await admin(base, "POST", "/admin/accounts", { name: "Bench", email: "bench@example.com" });
  const { key } = await admin(base, "POST", `/admin/accounts/${account.id}/api-keys`, { mode: "live" });
  await admin(base, "POST", `/admin/accounts/${account.id}/wabas`, {
    waba_id: "900000000000001",
    access_token: "EAAGbench",
  });
  const numbers = Array.from({ length: NUMBERS }, (_, i) => String(100_000_000_000_000 + i));
  for (let i = 0; i < numbers.length; i += 25) {
    await Promise.all(
      numbers.slice(i, i + 25).map((id) =>
        admin(base, "POST", `/admin/accounts/${account.id}/numbers`, {
          phone_number_id: id,
          waba_id: "900000000000001",
          kind: "embedded",
        }),
      ),
    );
  }
  return { key, numbers };
}

async function upload(url: string, key: string, mode: "chunked" | "declared", file: string): Promise<string> {
  const args = [
    "curl",
    "-sS",
    "-o",
    "/dev/null",
    "-w",
    "%{http_code}",
    "-X",
    "POST",
    "-H",
    `Authorization: Bearer ${key}`,
    "-H",
    "Content-Type: application/octet-stream",
  ];
  if (mode === "chunked") args.push("-H", "Transfer-Encoding: chunked");
  const child = Bun.spawn([...args, "--data-binary", `@${file}`, `${url}/v21.0/100000000000000/media`], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const code = await new Response(child.stdout).text();
  await child.exited;
  return code;
}

async function main() {
  const upstreamPort = await freePort();
  const upstreamChild = start([process.execPath, "bench/proxy/upstream.ts"], { PORT: String(upstreamPort) });
  const upstream = `http://127.0.0.1:${upstreamPort}`;
  await waitFor(upstream);

  const nginxPort = await freePort();
  const conf = readFileSync(join(import.meta.dir, "nginx.conf.template"), "utf8")
    .replaceAll("__DIR__", work)
    .replaceAll("__UPSTREAM_PORT__", String(upstreamPort))
    .replaceAll("__PORT__", String(nginxPort));
  writeFileSync(join(work, "nginx.conf"), conf);
  const nginxChild = start(["nginx", "-p", work, "-c", join(work, "nginx.conf")]);
  await waitFor(`http://127.0.0.1:${nginxPort}/`);

  const barePort = await freePort();
  const bareChild = start([process.execPath, "bench/proxy/bare.ts"], {
    PORT: String(barePort),
    UPSTREAM_URL: upstream,
  });
  await waitFor(`http://127.0.0.1:${barePort}/`);

  const dbPath = join(work, "switchboard.db");
  let sb = await startSwitchboard(upstreamPort, `file:${dbPath}`);
  const loadScript = async (base: string, name: string) => {
    const { key, numbers } = await seed(base);
    const path = join(work, name);
    writeFileSync(
      path,
      readFileSync(join(import.meta.dir, "load.lua.template"), "utf8")
        .replace("__PATHS__", numbers.map((n) => `"/v21.0/${n}/messages"`).join(", "))
        .replace("__KEY__", key),
    );
    return { key, numbers, path };
  };
  const { key, numbers, path: script } = await loadScript(sb.url, "load.lua");

  /** Rows (e) and (f): a Switchboard of their own (database, key) exporting to a collector stand-in of their own. */
  const tracedRow = async (row: "e" | "f", env: Record<string, string>) => {
    const collectorPort = await freePort();
    const collector = start([process.execPath, "bench/proxy/collector.ts"], { PORT: String(collectorPort) });
    const collectorUrl = `http://127.0.0.1:${collectorPort}`;
    await waitFor(`${collectorUrl}/stats`);
    const server = await startSwitchboard(upstreamPort, `file:${join(work, `traced-${row}.db`)}`, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
      ...env,
    });
    const load = await loadScript(server.url, `load-${row}.lua`);
    return {
      server,
      load,
      collector,
      stats: async () =>
        (await (await fetch(`${collectorUrl}/stats`)).json()) as { exports: number; bytes: number; spans: number },
      /** Calls made to it; each kept trace should reach the collector as four spans. */
      calls: 1,
      collectorCpu: 0,
    };
  };
  const traced = {
    e: await tracedRow("e", {}),
    f: await tracedRow("f", {
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: String(SAMPLED),
    }),
  };
  const backing = await startScaleOutBacking(await freePort());
  cleanups.push(backing.stop);
  const scaled = await startSwitchboard(upstreamPort, backing.env.DATABASE_URL!, backing.env);
  const scaledLoad = await loadScript(scaled.url, "load-p.lua");
  const unlogged = await startSwitchboard(upstreamPort, `file:${join(work, "unlogged.db")}`, { REQUEST_LOG: "0" });
  const unloggedLoad = await loadScript(unlogged.url, "load-q.lua");

  // Every row must answer 200 before it is measured.
  const probes = [
    [upstream, key],
    [`http://127.0.0.1:${nginxPort}`, key],
    [`http://127.0.0.1:${barePort}`, key],
    [sb.url, key],
    [traced.e.server.url, traced.e.load.key],
    [traced.f.server.url, traced.f.load.key],
    [scaled.url, scaledLoad.key],
    [unlogged.url, unloggedLoad.key],
  ];
  for (const [url, bearer] of probes) {
    const r = await fetch(`${url}/v21.0/${numbers[0]}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: '{"to":"1"}',
    });
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}: ${await r.text()}`);
  }

  const rows = {
    a: "upstream directly",
    b: "nginx proxy_pass (keep-alive)",
    c: "bare Bun fetch pass-through",
    d: "Switchboard, every check on",
    e: "Switchboard, every check on, every call traced (OTLP/HTTP)",
    f: `Switchboard, every check on, traces sampled at ${SAMPLED} (OTLP/HTTP)`,
    p: "Switchboard, every check on, scale-out mode (PostgreSQL + Redis)",
    q: "Switchboard, every check on, request log off",
  } as const;
  type Row = keyof typeof rows;
  const urls: Record<Row, string> = {
    a: upstream,
    b: `http://127.0.0.1:${nginxPort}`,
    c: `http://127.0.0.1:${barePort}`,
    d: sb.url,
    e: traced.e.server.url,
    f: traced.f.server.url,
    p: scaled.url,
    q: unlogged.url,
  };
  const pids: Record<Row, number> = {
    a: upstreamChild.pid,
    b: nginxChild.pid,
    c: bareChild.pid,
    d: sb.child.pid,
    e: traced.e.server.child.pid,
    f: traced.f.server.child.pid,
    p: scaled.child.pid,
    q: unlogged.child.pid,
  };
  const scripts: Record<Row, string> = {
    a: script,
    b: script,
    c: script,
    d: script,
    e: traced.e.load.path,
    f: traced.f.load.path,
    p: scaledLoad.path,
    q: unloggedLoad.path,
  };
  const results: Record<Row, WrkResult[]> = { a: [], b: [], c: [], d: [], e: [], f: [], p: [], q: [] };
  const peakUnderLoad = { d: 0, e: 0, f: 0, p: 0, q: 0 };
  /** Row (p): the Redis server's CPU per request, on the same 2 cores. */
  const redisCpu: number[] = [];
  const chosen = (Object.keys(rows) as Row[]).filter((row) => ROWS.includes(row));
  for (const row of chosen) {
    const warm = await wrk(urls[row], scripts[row], 2); // warm-up
    if (row === "e" || row === "f") traced[row].calls += warm.requests;
  }
  // Row (d)'s request log, before its rounds: what they add is the log's disk use.
  await Bun.sleep(1500);
  const logBefore = logFootprint(dbPath);
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of chosen) {
      if (row === "d" || row === "e" || row === "f" || row === "p" || row === "q") {
        const cpuBefore = cpuSeconds(pids[row]);
        const collectorBefore = row === "e" || row === "f" ? cpuSeconds(traced[row].collector.pid) : 0;
        const redisBefore = row === "p" && backing.redisPid ? cpuSeconds(backing.redisPid) : 0;
        const { result, peakMb } = await sampling(pids[row], wrk(urls[row], scripts[row], SECONDS));
        if (row === "e" || row === "f") {
          // Spans still queued when the load stops are exported after it: that work is the row's
          // own, and must not run into the next row's time.
          await drained(traced[row].stats);
          traced[row].calls += result.requests;
          traced[row].collectorCpu += cpuSeconds(traced[row].collector.pid) - collectorBefore;
        }
        result.cpuUsPerRequest = ((cpuSeconds(pids[row]) - cpuBefore) * 1e6) / result.requests;
        if (row === "p" && backing.redisPid)
          redisCpu.push(((cpuSeconds(backing.redisPid) - redisBefore) * 1e6) / result.requests);
        peakUnderLoad[row] = Math.max(peakUnderLoad[row], peakMb);
        results[row].push(result);
      } else {
        results[row].push(await wrk(urls[row], scripts[row], SECONDS, pids[row]));
      }
    }
  }
  const exported = { e: await traced.e.stats(), f: await traced.f.stats() };
  await Bun.sleep(1500); // the log's last batch
  const logAfter = logFootprint(dbPath);

  // A fresh process for the upload, so the load above does not hide what the upload adds.
  const uploads: { mode: string; code: string; addedMb: number; baseMb: number }[] = [];
  if (UPLOADS) {
    sb.child.kill();
    await sb.child.exited;
    sb = await startSwitchboard(upstreamPort, `file:${dbPath}`);
    const file = join(work, "100mb.bin");
    writeFileSync(file, new Uint8Array(100 * 1024 * 1024).fill(7));
    await wrk(sb.url, script, 1);
    await Bun.sleep(500);
    for (const mode of ["declared", "chunked"] as const) {
      const baseMb = status(sb.child.pid, "VmRSS");
      const { result: code, peakMb } = await sampling(sb.child.pid, upload(sb.url, key, mode, file));
      uploads.push({ mode, code, addedMb: peakMb - baseMb, baseMb });
    }
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const summary = Object.fromEntries(
    Object.entries(results).map(([row, rs]) => [
      row,
      {
        rps: mean(rs.map((r) => r.rps)),
        p99: mean(rs.map((r) => r.p99)),
        p50: mean(rs.map((r) => r.p50)),
        cpu: mean(rs.map((r) => r.cpuUsPerRequest)),
        errors: rs.map((r) => r.errors).filter(Boolean),
      },
    ]),
  );
  const s = summary as Record<Row, { rps: number; p99: number; p50: number; cpu: number; errors: string[] }>;
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  console.log(
    `\nwrk -t2 -c${CONNECTIONS} -d${SECONDS}s, ${ROUNDS} round(s) per row (mean shown), ${NUMBERS} numbers; load average now ${load}\n`,
  );
  console.log("| row | what | req/s | p50 ms | p99 ms | server CPU µs/req | note |");
  console.log("|---|---|---:|---:|---:|---:|---|");
  for (const row of chosen) {
    const r = s[row];
    const each = results[row]!.map((x) => `${Math.round(x.rps)} (${x.cpuUsPerRequest.toFixed(0)} µs)`).join(" / ");
    console.log(
      `| ${row} | ${rows[row]} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpu.toFixed(1)} | rounds: ${each}${r.errors.length ? `; ${r.errors.join("; ")}` : ""} |`,
    );
  }
  console.log("");
  console.log(`(d)/(c) = ${(s.d.rps / s.c.rps).toFixed(2)}   (target >= 0.90)`);
  console.log(`(d)/(b) = ${(s.d.rps / s.b.rps).toFixed(2)}`);
  console.log(`(c)/(b) = ${(s.c.rps / s.b.rps).toFixed(2)}`);
  console.log(
    `CPU per request (c)/(d) = ${(s.c.cpu / s.d.cpu).toFixed(2)}   (the throughput ratio (d)/(c) this implies on an idle machine; less noisy than req/s under shared CPU)`,
  );
  console.log(`p99 (d) - p99 (c) = ${(s.d.p99 - s.c.p99).toFixed(2)} ms   (target <= 1 ms)`);
  console.log(`peak RSS of Switchboard under load = ${peakUnderLoad.d.toFixed(0)} MB   (target <= 150 MB)`);
  for (const row of ["e", "f"] as const) {
    if (!chosen.includes(row)) continue;
    const requests = results[row].reduce((sum, r) => sum + r.requests, 0);
    console.log(
      `(${row})/(d) = ${(s[row].rps / s.d.rps).toFixed(2)} by req/s, ${(s.d.cpu / s[row].cpu).toFixed(2)} by CPU per request   (traces on against off; target >= 0.90)`,
    );
    console.log(
      `  spans its collector stand-in received per call = ${(exported[row].spans / traced[row].calls).toFixed(2)}   (4 per kept trace; ${exported[row].exports} exports, ${(exported[row].bytes / 1e6).toFixed(0)} MB)`,
    );
    console.log(
      `  collector stand-in CPU = ${((traced[row].collectorCpu * 1e6) / requests).toFixed(1)} µs per call (on the same 2 cores); peak RSS of this Switchboard under load = ${peakUnderLoad[row].toFixed(0)} MB`,
    );
  }
  if (chosen.includes("p")) {
    console.log(
      `(p)/(d) = ${(s.p.rps / s.d.rps).toFixed(2)} by req/s, ${(s.d.cpu / s.p.cpu).toFixed(2)} by CPU per request   (scale-out against SQLite; target >= 0.80)`,
    );
    console.log(
      `  p99 (p) - p99 (d) = ${(s.p.p99 - s.d.p99).toFixed(2)} ms   (target <= 1 ms); peak RSS under load = ${peakUnderLoad.p.toFixed(0)} MB`,
    );
    if (redisCpu.length)
      console.log(
        `  Redis server CPU = ${mean(redisCpu).toFixed(1)} µs per request (beside Switchboard's own, on the same cores)`,
      );
  }
  if (chosen.includes("q") && chosen.includes("d")) {
    console.log(
      `(d)/(q) = ${(s.d.rps / s.q.rps).toFixed(2)} by req/s, ${(s.q.cpu / s.d.cpu).toFixed(2)} by CPU per request   (request log on against off; target >= 0.95)`,
    );
    const records = logAfter.records - logBefore.records;
    console.log(
      `  the log's CPU per call = ${(s.d.cpu - s.q.cpu).toFixed(1)} µs (capture, buffer and batched writes); ${records} records written, ${((((logAfter.bytes - logBefore.bytes) / Math.max(1, records)) * 1e6) / 2 ** 20).toFixed(0)} MiB of database per million calls`,
    );
  }
  for (const u of uploads)
    console.log(
      `100 MB ${u.mode} upload: HTTP ${u.code}, RSS ${u.baseMb.toFixed(0)} MB before, +${u.addedMb.toFixed(1)} MB at peak   (target <= 32 MB)`,
    );
}

try {
  await main();
} finally {
  for (const child of children) child.kill();
  await Promise.all(children.map((c) => c.exited));
  for (const cleanup of cleanups) await cleanup();
  rmSync(work, { recursive: true, force: true });
}
