#!/usr/bin/env bun
/**
 * Start-up of the single executable, as users see it: from spawning `dist/switchboard serve` to
 * its first 200 from /healthz, on a new database (migrations included) and on an existing one (a
 * database a first start made, with an account and a key in it), the two kinds in turn. Prints
 * every run, the medians, and the CPU the process had used by then (Linux: /proc's schedstat, in
 * ms): on a busy machine the wall time mostly measures the wait for a core, the CPU time what the
 * start itself costs. The load average is printed before and after.
 *   bun run build && bun bench/startup/run.ts        (RUNS=5 of each kind by default; BINARY=… another build)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = resolve(process.env.BINARY ?? resolve(import.meta.dir, "../../dist/switchboard"));
const runs = Number(process.env.RUNS ?? 5);
const port = 18_000 + Math.floor(Math.random() * 1000);
const ADMIN_TOKEN = "startup-admin-token";
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

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

interface Run {
  ms: number;
  cpu: { main: number; all: number } | null;
}

/** One start on `databasePath`; `then` runs against the server before it is stopped. */
async function start(databasePath: string, then?: (url: string) => Promise<void>): Promise<Run> {
  const started = performance.now();
  const proc = Bun.spawn([binary, "serve"], {
    env: {
      DEV_MODE: "1",
      DATABASE_URL: `file:${databasePath}`,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      ADMIN_TOKEN,
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
  const run = { ms: performance.now() - started, cpu: cpuOf(proc.pid) };
  await then?.(`http://127.0.0.1:${port}`);
  proc.kill("SIGTERM");
  await proc.exited;
  return run;
}

/** An account and a live key through the operator API: the existing database is not an empty one. */
async function seed(url: string): Promise<void> {
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as { id: string };
  };
  const account = await post("/admin/accounts", { name: "Startup", email: "startup@example.com" });
  await post(`/admin/accounts/${account.id}/api-keys`, { mode: "live" });
}

const loadBefore = loadAverage();
const existingDir = mkdtempSync(join(tmpdir(), "switchboard-startup-existing-"));
const existing = join(existingDir, "db.sqlite");
await start(existing, seed);
const kinds: Record<"new" | "existing", Run[]> = { new: [], existing: [] };
try {
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-startup-"));
    kinds.new.push(await start(join(dir, "db.sqlite")));
    rmSync(dir, { recursive: true, force: true });
    kinds.existing.push(await start(existing));
  }
} finally {
  rmSync(existingDir, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const listed = (values: number[]) =>
  [...values]
    .sort((a, b) => a - b)
    .map((t) => t.toFixed(0))
    .join(" ");
console.log(
  `binary: ${(statSync(binary).size / 1e6).toFixed(1)} MB; load average before ${loadBefore}, after ${loadAverage()}`,
);
for (const [kind, results] of Object.entries(kinds)) {
  const times = results.map((r) => r.ms);
  const mains = results.flatMap((r) => (r.cpu ? [r.cpu.main] : []));
  const alls = results.flatMap((r) => (r.cpu ? [r.cpu.all] : []));
  console.log(
    `${kind} database: start to first /healthz 200 (ms): ${listed(times)}; median ${median(times).toFixed(0)}   (target <= 150)`,
  );
  if (mains.length > 0) {
    console.log(
      `  CPU by then, main thread (ms): ${listed(mains)}; median ${median(mains).toFixed(0)}   (target <= 80)`,
    );
    console.log(`  CPU by then, all threads (ms): ${listed(alls)}; median ${median(alls).toFixed(0)}`);
  }
}
