#!/usr/bin/env bun
/**
 * Start-up of the single executable: from spawning `dist/switchboard serve` on a fresh database to
 * its first 200 from /healthz (migrations included). Prints every run and the median.
 *   bun run build && bun bench/startup/run.ts        (RUNS=9 by default)
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = resolve(import.meta.dir, "../../dist/switchboard");
const runs = Number(process.env.RUNS ?? 9);
const port = 18_000 + Math.floor(Math.random() * 1000);
const times: number[] = [];

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
  proc.kill("SIGTERM");
  await proc.exited;
  rmSync(dir, { recursive: true, force: true });
}
times.sort((a, b) => a - b);
console.log(`binary: ${(statSync(binary).size / 1e6).toFixed(1)} MB`);
console.log(`runs (ms): ${times.map((t) => t.toFixed(0)).join(" ")}`);
console.log(`median: ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms`);
