#!/usr/bin/env bun
/**
 * Where a call's CPU goes, thread by thread (issue 40): the floor (row w), Switchboard with its
 * defaults (d) and with the request log off (q), each under wrk, every thread's user+system CPU from
 * /proc divided by the calls wrk completed. The serving thread is "main"; Bun's fetch runs on "HTTP
 * Client"; the request log's writer is a "Worker"; JIT and GC have their own.
 *
 * Row v is the floor answering with upstream's answer read whole, as Switchboard answers a send
 * whose message id the request log reads.
 *
 *   flock /tmp/switchboard-heavy.lock bun bench/proxy/threads.ts    (ROWS=wdq BENCH_SECONDS=5 ROUNDS=2; ROWS=wvqd)
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_TOKEN, freePort, loadAverage, start, startSwitchboard, stopAll, waitFor } from "./processes.ts";
import { benchNumbers, seedProxyLoad, wrk, writeLoadScript } from "./wrk.ts";

const ROWS = (process.env.ROWS ?? "wdq").split("");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const work = mkdtempSync(join(tmpdir(), "switchboard-threads-"));

/** CPU seconds so far of each of a process's threads, by name (the first thread as "main"). */
function threads(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // ended since the listing
    }
    const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
  }
  return out;
}

const upstreamPort = await freePort();
start([process.execPath, "bench/proxy/upstream.ts"], { PORT: String(upstreamPort) });
await waitFor(`http://127.0.0.1:${upstreamPort}/`);
const servers: { row: string; url: string; pid: number; script: string }[] = [];
for (const row of ROWS) {
  const script = join(work, `${row}.lua`);
  if (row === "w" || row === "v") {
    const port = await freePort();
    const env = {
      PORT: String(port),
      UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
      BODY: "whole",
      ANSWER: row === "v" ? "whole" : "stream",
    };
    const child = start([process.execPath, "bench/proxy/bare.ts"], env);
    await waitFor(`http://127.0.0.1:${port}/`);
    writeLoadScript(script, "px_live_unchecked", benchNumbers(1000));
    servers.push({ row, url: `http://127.0.0.1:${port}`, pid: child.pid, script });
  } else {
    const env: Record<string, string> = row === "q" ? { REQUEST_LOG: "0" } : {};
    const { url, child } = await startSwitchboard(upstreamPort, `file:${join(work, `${row}.db`)}`, env);
    await seedProxyLoad(url, ADMIN_TOKEN, 1000, script);
    servers.push({ row, url, pid: child.pid, script });
  }
}

const spent = new Map<string, Map<string, number>>();
const calls = new Map<string, number>();
console.log(`load average before ${loadAverage()}`);
// Round -1 is the warm-up.
for (let round = -1; round < ROUNDS; round++) {
  for (const server of servers) {
    const before = threads(server.pid);
    const run = await wrk(server.url, server.script, round < 0 ? 2 : SECONDS);
    if (round < 0) continue;
    const row = spent.get(server.row) ?? new Map<string, number>();
    for (const [name, cpu] of threads(server.pid)) row.set(name, (row.get(name) ?? 0) + cpu - (before.get(name) ?? 0));
    spent.set(server.row, row);
    calls.set(server.row, (calls.get(server.row) ?? 0) + run.requests);
  }
}
for (const [row, byThread] of spent) {
  const n = calls.get(row) ?? 0;
  const total = [...byThread.values()].reduce((a, b) => a + b, 0);
  const parts = [...byThread]
    .filter(([, cpu]) => cpu > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, cpu]) => `${name} ${((cpu / n) * 1e6).toFixed(1)}`);
  console.log(
    `${row}: ${((total / n) * 1e6).toFixed(1)} µs a call, ${Math.round(n / (SECONDS * ROUNDS))} req/s | ${parts.join(", ")}`,
  );
}
console.log(`load average after ${loadAverage()}`);
await stopAll();
