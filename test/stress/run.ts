/**
 * Runs one test file (or a filtered test) many times, several at once, beside busy loops on every
 * core, and reports how the runs went: a race, recovery or throttle test that passes once on a
 * quiet machine proves little.
 *
 *   bun test/stress/run.ts [--runs 50] [--parallel 4] [--busy <loops>] [--env K=V …] -- <bun test args>
 *
 * e.g. `bun test/stress/run.ts --runs 30 -- test/auth/throttle.test.ts -t "parallel"`.
 * `--busy` defaults to one loop per core. Each run's output is kept under `--out` (default a
 * temp folder) as run-N.log (what a test printed, such as measured times, for the distribution);
 * the failed ones are named in the report. Exit 0 only when every run passed.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseStressArgs } from "./args.ts";

const BUSY_LOOP = "for(;;){}";

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface RunResult {
  index: number;
  passed: boolean;
  ms: number;
  output: string;
}

async function runOnce(index: number, testArgs: string[], env: Record<string, string>): Promise<RunResult> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...testArgs], {
    env: { ...process.env, ...env, STRESS_RUN: String(index) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { index, passed: code === 0, ms: performance.now() - started, output: `${stdout}\n${stderr}` };
}

async function main(): Promise<number> {
  const options = parseStressArgs(process.argv.slice(2), availableParallelism());
  if ("error" in options) {
    console.error(options.error);
    return 2;
  }
  const out = options.out ?? mkdtempSync(join(tmpdir(), "switchboard-stress-"));
  const busy = Array.from({ length: options.busy }, () =>
    Bun.spawn([process.execPath, "-e", BUSY_LOOP], { stdout: "ignore", stderr: "ignore" }),
  );
  console.log(
    `${options.runs} runs of \`bun test ${options.testArgs.join(" ")}\`, ${options.parallel} at a time, beside ${options.busy} busy loop(s); load ${loadavg()[0]?.toFixed(2)}`,
  );
  const results: RunResult[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.runs) {
      const index = next++;
      const result = await runOnce(index, options.testArgs, options.env);
      results.push(result);
      writeFileSync(join(out, `run-${index}.log`), result.output);
      process.stdout.write(result.passed ? "." : "F");
    }
  };
  try {
    await Promise.all(Array.from({ length: options.parallel }, worker));
  } finally {
    for (const p of busy) p.kill(9);
  }
  const failed = results.filter((r) => !r.passed);
  const times = results.map((r) => r.ms).sort((a, b) => a - b);
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    `\n${results.length - failed.length} passed, ${failed.length} failed; run time min ${s(times[0] ?? 0)}, median ${s(percentile(times, 50))}, p90 ${s(percentile(times, 90))}, max ${s(times.at(-1) ?? 0)}; load ${loadavg()[0]?.toFixed(2)}`,
  );
  if (failed.length > 0)
    console.log(`failed runs' output: ${failed.map((r) => join(out, `run-${r.index}.log`)).join(", ")}`);
  return failed.length === 0 ? 0 : 1;
}

process.exit(await main());
