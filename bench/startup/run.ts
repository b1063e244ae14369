#!/usr/bin/env bun
/**
 * Start-up of the single executable: from spawning `dist/switchboard serve` on a fresh database to
 * its first 200 from /healthz (migrations included). Prints every run and the median, and the CPU
 * the process had used by then (Linux: /proc's schedstat, in ms): on a busy machine the wall time
 * mostly measures the wait for a core, the CPU time what the start itself costs.
 *   bun run build && bun bench/startup/run.ts        (RUNS=9 by default; BINARY=… another build)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = resolve(process.env.BINARY ?? resolve(import.meta.dir, "../../dist/switchboard"));
const runs = Number(process.env.RUNS ?? 9);
const port = 18_000 + Math.floor(Math.random() * 1000);

/** CPU time a thread has run, in ms (the first field of its schedstat, in ns); null where /proc has none. */
function ranMs(path: string): number | null {
  try {
    return Number(readFileSync(path, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return null;
  }
}

/** The main thread's CPU and every thread's (the WAL checkpointer's runs beside it), in ms. */
function cpuOf(pid: number): { main: number; all: number } | null {
  const main = ranMs(`/proc/${pid}/schedstat`);
  if (main === null) return null;
  let all = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) all += ranMs(`/proc/${pid}/task/${task}/schedstat`) ?? 0;
  return { main, all };
}

const times: number[] = [];
const mains: number[] = [];
const alls: number[] = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-startup-"));
  const started = performance.now();
  const proc = Bun.spawn([binary, "serve"], {
    env: {
      DEV_MODE: "1",
      DATABASE_URL: `file:${dir}/db.sqlite`,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break;
    } catch {
      await Bun.sleep(1);
    }
  }
  times.push(performance.now() - started);
  const cpu = cpuOf(proc.pid);
  if (cpu) {
    mains.push(cpu.main);
    alls.push(cpu.all);
  }
  proc.kill("SIGTERM");
  await proc.exited;
  rmSync(dir, { recursive: true, force: true });
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const listed = (values: number[]) =>
  [...values]
    .sort((a, b) => a - b)
    .map((t) => t.toFixed(0))
    .join(" ");
console.log(`binary: ${(statSync(binary).size / 1e6).toFixed(1)} MB`);
console.log(`runs (ms): ${listed(times)}`);
console.log(`median: ${median(times).toFixed(0)} ms`);
if (mains.length > 0) {
  console.log(`CPU by then, main thread (ms): ${listed(mains)}; median ${median(mains).toFixed(0)}`);
  console.log(`CPU by then, all threads (ms): ${listed(alls)}; median ${median(alls).toFixed(0)}`);
}
