#!/usr/bin/env bun
/**
 * Proxy benchmark (issues 3 and 40): one run, one machine, one load generator (wrk, 50
 * connections), one fake upstream (bench/proxy/upstream.ts). Rows:
 *   (a) the upstream directly  (b) nginx proxy_pass with keep-alive
 *   (c) a bare Bun fetch pass-through that streams the request body
 *   (w) the same reading the body whole first, as Switchboard does below PROXY_BODY_BUFFER_BYTES:
 *       the floor Switchboard's own cost is measured against
 *   (d) Switchboard (src/main.ts serve) with every check on and its defaults (request log on),
 *       message POSTs spread over NUMBERS numbers so none passes its 80/s bucket
 *   (e) the same with OpenTelemetry traces on, every call's span exported over OTLP/HTTP to a
 *       collector stand-in (bench/proxy/collector.ts); its own database
 *   (f) keeping SAMPLED (0.1) of the traces  (g) every call traced with OTEL_SPAN_DETAIL=full
 *   (p) the scale-out mode: state on a PostgreSQL server of its own, rate limits in Redis
 *   (q) the request log off (REQUEST_LOG=0)
 * Only the chosen rows' servers are started. Then the RSS a 100 MB upload adds to a fresh
 * Switchboard process (chunked and declared). The load average is printed before and after.
 *
 *   bun bench/proxy/run.ts     (ROWS=abcwdefgpq BENCH_SECONDS=10 ROUNDS=2 NUMBERS=1000 SAMPLED=0.1 UPLOADS=1)
 *   ROWS=wdq bun bench/proxy/run.ts    the issue-40 targets: Switchboard against its floor, log on and off
 *   PACE=2000 ROWS=wdq bun bench/proxy/run.ts    the same at a fixed rate under every row's capacity: the tail
 * Needs `wrk`, `nginx` and `curl` (Debian: apt-get install -y wrk nginx curl).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logFootprint } from "./request-log.ts";
import { startScaleOutBacking } from "./scale-out.ts";
import {
  ADMIN_TOKEN,
  cpuSeconds,
  freePort,
  loadAverage,
  sampling,
  start,
  startSwitchboard,
  status,
  stopAll,
  upload,
  waitFor,
} from "./processes.ts";
import { report, ROW_NAMES, type Measured, type Row, type Summary } from "./report.ts";
import { benchNumbers, CONNECTIONS, PACE, seedProxyLoad, wrk, writeLoadScript } from "./wrk.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const NUMBERS = Number(process.env.NUMBERS ?? 1000);
const ROWS = process.env.ROWS ?? "abcwdefgpq";
const UPLOADS = process.env.UPLOADS !== "0";
/** The share of traces row (f) keeps (OTEL_TRACES_SAMPLER=parentbased_traceidratio). */
const SAMPLED = Number(process.env.SAMPLED ?? 0.1);
const work = mkdtempSync(join(tmpdir(), "switchboard-bench-"));
const cleanups: (() => Promise<void>)[] = [];

const isTraced = (row: Row) => row === "e" || row === "f" || row === "g";

interface Server {
  url: string;
  pid: number;
  /** wrk's script of sends with a key this server knows. */
  script: string;
  key: string;
  /** Traced rows: their collector stand-in's pid and figures. */
  collector?: { pid: number; stats(): Promise<{ exports: number; bytes: number; spans: number }> };
  /** Row (p): the Redis server's pid, when it runs here. */
  redisPid?: number;
}

/** wrk's script for the rows that check no key (a, b, c, w). */
function plainScript(): string {
  const path = join(work, "plain.lua");
  writeLoadScript(path, "px_live_unchecked", benchNumbers(NUMBERS));
  return path;
}

async function switchboardRow(row: Row, upstreamPort: number, env: Record<string, string> = {}): Promise<Server> {
  const database = env.DATABASE_URL ?? `file:${join(work, `row-${row}.db`)}`;
  const { url, child } = await startSwitchboard(upstreamPort, database, env);
  const script = join(work, `load-${row}.lua`);
  const { key } = await seedProxyLoad(url, ADMIN_TOKEN, NUMBERS, script);
  return { url, pid: child.pid, script, key };
}

/** Starts row `row`'s server(s). */
async function startRow(row: Row, upstream: { url: string; port: number; pid: number }): Promise<Server> {
  const plain = (url: string, pid: number): Server => ({ url, pid, script: plainScript(), key: "px_live_unchecked" });
  switch (row) {
    case "a":
      return plain(upstream.url, upstream.pid);
    case "b": {
      const port = await freePort();
      const conf = readFileSync(join(import.meta.dir, "nginx.conf.template"), "utf8")
        .replaceAll("__DIR__", work)
        .replaceAll("__UPSTREAM_PORT__", String(upstream.port))
        .replaceAll("__PORT__", String(port));
      writeFileSync(join(work, "nginx.conf"), conf);
      const child = start(["nginx", "-p", work, "-c", join(work, "nginx.conf")]);
      await waitFor(`http://127.0.0.1:${port}/`);
      return plain(`http://127.0.0.1:${port}`, child.pid);
    }
    case "c":
    case "w": {
      const port = await freePort();
      const child = start([process.execPath, "bench/proxy/bare.ts"], {
        PORT: String(port),
        UPSTREAM_URL: upstream.url,
        BODY: row === "w" ? "whole" : "stream",
      });
      await waitFor(`http://127.0.0.1:${port}/`);
      return plain(`http://127.0.0.1:${port}`, child.pid);
    }
    case "e":
    case "f":
    case "g": {
      const port = await freePort();
      const collector = start([process.execPath, "bench/proxy/collector.ts"], { PORT: String(port) });
      const collectorUrl = `http://127.0.0.1:${port}`;
      await waitFor(`${collectorUrl}/stats`);
      const env: Record<string, string> =
        row === "f"
          ? { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: String(SAMPLED) }
          : row === "g"
            ? { OTEL_SPAN_DETAIL: "full" }
            : {};
      const server = await switchboardRow(row, upstream.port, { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, ...env });
      const stats = async () =>
        (await (await fetch(`${collectorUrl}/stats`)).json()) as { exports: number; bytes: number; spans: number };
      return { ...server, collector: { pid: collector.pid, stats } };
    }
    case "p": {
      const backing = await startScaleOutBacking(await freePort());
      cleanups.push(backing.stop);
      return { ...(await switchboardRow(row, upstream.port, backing.env)), redisPid: backing.redisPid };
    }
    case "q":
      return switchboardRow(row, upstream.port, { REQUEST_LOG: "0" });
    case "d":
      return switchboardRow(row, upstream.port);
  }
}

/** Waits until a collector stand-in has received nothing new for 1.5 s (the exporter sends at least once a second while it has spans). */
async function drained(stats: () => Promise<{ spans: number }>): Promise<void> {
  let last = -1;
  for (let spans = (await stats()).spans; spans !== last; spans = (await stats()).spans) {
    last = spans;
    await Bun.sleep(1500);
  }
}

/** One round of `seconds` against a row, with its server's CPU and RSS meanwhile. */
async function measure(server: Server, row: Row, seconds: number): Promise<Measured> {
  const beside = server.collector?.pid ?? server.redisPid;
  const cpuBefore = cpuSeconds(server.pid);
  const besideBefore = beside ? cpuSeconds(beside) : 0;
  const { result, peakMb } = await sampling(server.pid, wrk(server.url, server.script, seconds));
  // Spans still queued when the load stops are exported after it: that work is the row's own.
  if (isTraced(row) && server.collector) await drained(server.collector.stats);
  return {
    ...result,
    cpuUs: ((cpuSeconds(server.pid) - cpuBefore) * 1e6) / result.requests,
    peakMb,
    besideCpu: beside ? cpuSeconds(beside) - besideBefore : 0,
  };
}

async function main() {
  const loadBefore = loadAverage();
  const chosen = (Object.keys(ROW_NAMES) as Row[]).filter((row) => ROWS.includes(row));
  const upstreamPort = await freePort();
  const upstreamChild = start([process.execPath, "bench/proxy/upstream.ts"], { PORT: String(upstreamPort) });
  const upstream = { url: `http://127.0.0.1:${upstreamPort}`, port: upstreamPort, pid: upstreamChild.pid };
  await waitFor(upstream.url);

  const servers = {} as Record<Row, Server>;
  for (const row of chosen) servers[row] = await startRow(row, upstream);
  // Every row must answer 200 before it is measured.
  for (const row of chosen) {
    const { url, key } = servers[row];
    const r = await fetch(`${url}/v21.0/${benchNumbers(1)[0]}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: '{"to":"1"}',
    });
    if (r.status !== 200) throw new Error(`row ${row} answered ${r.status}: ${await r.text()}`);
  }

  const calls = Object.fromEntries(chosen.map((row) => [row, 1])) as Record<Row, number>;
  for (const row of chosen) calls[row] += (await wrk(servers[row].url, servers[row].script, 2)).requests; // warm-up
  await Bun.sleep(1500);
  // bench/proxy/stalls.ts: what its servers noted until now (start, seeding, warm-up) is not counted.
  if (process.env.STALLS) for (const row of chosen) process.kill(servers[row].pid, "SIGUSR2");
  const logBefore = chosen.includes("d") ? logFootprint(join(work, "row-d.db")) : null;
  const results = Object.fromEntries(chosen.map((row) => [row, [] as Measured[]])) as Record<Row, Measured[]>;
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of chosen) {
      const measured = await measure(servers[row], row, SECONDS);
      calls[row] += measured.requests;
      results[row].push(measured);
    }
  }
  await Bun.sleep(1500); // the log's last batch
  const logAfter = logBefore ? logFootprint(join(work, "row-d.db")) : null;
  const exported: Partial<Record<Row, { exports: number; bytes: number; spans: number }>> = {};
  for (const row of chosen) if (servers[row].collector) exported[row] = await servers[row].collector!.stats();

  // A fresh process for the upload, so the load above does not hide what the upload adds.
  const uploads: { mode: string; code: string; addedMb: number; baseMb: number }[] = [];
  if (UPLOADS) {
    const { url, child } = await startSwitchboard(upstreamPort, `file:${join(work, "uploads.db")}`);
    const { key } = await seedProxyLoad(url, ADMIN_TOKEN, 1, join(work, "uploads.lua"));
    const file = join(work, "100mb.bin");
    writeFileSync(file, new Uint8Array(100 * 1024 * 1024).fill(7));
    await wrk(url, join(work, "uploads.lua"), 1);
    await Bun.sleep(500);
    for (const mode of ["declared", "chunked"] as const) {
      const baseMb = status(child.pid, "VmRSS");
      const { result: code, peakMb } = await sampling(child.pid, upload(url, key, mode, file));
      uploads.push({ mode, code, addedMb: peakMb - baseMb, baseMb });
    }
  }

  const summary: Summary = {
    sampled: SAMPLED,
    header: `wrk -t2 -c${CONNECTIONS} -d${SECONDS}s${PACE > 0 ? `, paced at ${PACE} req/s` : ""}, ${ROUNDS} round(s) per row (mean shown), ${NUMBERS} numbers; load average before ${loadBefore}, after ${loadAverage()}`,
    results,
    calls,
    exported,
    log:
      logBefore && logAfter
        ? { records: logAfter.records - logBefore.records, bytes: logAfter.bytes - logBefore.bytes }
        : null,
    uploads,
  };
  report(summary);
}

try {
  await main();
} finally {
  await stopAll();
  for (const cleanup of cleanups) await cleanup();
  rmSync(work, { recursive: true, force: true });
}
