/**
 * A preload that finds the serving thread's stalls (issue 40's tail): a 1 ms timer on the main
 * thread notes every gap over STALL_MS (2) between its turns, and how much of that gap the thread
 * itself ran (its CPU time, /proc's schedstat): a gap the thread ran through is its own work (a GC,
 * a long task, a batch's hand-over); one it did not run through is the machine's (the thread
 * waited for a core, or slept in a system call). Prints one line at exit, on standard error.
 *
 *   STALLS=1 BUN_OPTIONS="--preload ./bench/proxy/stalls.ts" ROWS=wdq PACE=2000 bun bench/proxy/run.ts
 *
 * Only the servers measure (Switchboard's `serve` and bench/proxy/bare.ts); every other bun
 * process the run starts loads it and does nothing. run.ts sends SIGUSR2 once its servers are
 * seeded and warm: the counts start again there.
 */
import { readFileSync } from "node:fs";

const serving = process.argv.includes("serve") || process.argv.some((a) => a.endsWith("bare.ts"));
if (process.env.STALLS && serving) {
  const threshold = Number(process.env.STALL_MS ?? 2);
  const cpuMs = () => Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6;
  const none = { count: 0, wallMs: 0, ranMs: 0, over10: 0, over10Wall: 0, over10Ran: 0, longest: 0, longestRan: 0 };
  let gaps = { ...none };
  // bench/proxy/run.ts sends it once the servers are seeded and warm: only the measured rounds count.
  process.on("SIGUSR2", () => {
    gaps = { ...none };
  });
  let lastWall = performance.now();
  let lastCpu = cpuMs();
  setInterval(() => {
    const wall = performance.now();
    const cpu = cpuMs();
    // The timer's own period is 1 ms: what is over it is the stall.
    const gap = wall - lastWall - 1;
    if (gap > threshold) {
      const ran = Math.min(gap, cpu - lastCpu);
      gaps.count++;
      gaps.wallMs += gap;
      gaps.ranMs += ran;
      if (gap > 10) {
        gaps.over10++;
        gaps.over10Wall += gap;
        gaps.over10Ran += ran;
      }
      if (gap > gaps.longest) {
        gaps.longest = gap;
        gaps.longestRan = ran;
      }
    }
    lastWall = wall;
    lastCpu = cpu;
  }, 1).unref();
  const label = process.argv.includes("serve")
    ? `switchboard (log ${process.env.REQUEST_LOG === "0" ? "off" : "on"}, traces ${process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? "on" : "off"})`
    : "bare pass-through";
  // bare.ts has no SIGTERM handler of its own (Switchboard's exits through process.exit).
  if (!process.argv.includes("serve")) process.once("SIGTERM", () => process.exit(0));
  process.on("exit", () => {
    const f = (n: number) => n.toFixed(0);
    process.stderr.write(
      `stalls of ${label}: ${gaps.count} over ${threshold} ms (${f(gaps.wallMs)} ms, of which the thread ran ${f(gaps.ranMs)}); ` +
        `${gaps.over10} over 10 ms (${f(gaps.over10Wall)} ms, ran ${f(gaps.over10Ran)}); longest ${gaps.longest.toFixed(1)} ms (ran ${gaps.longestRan.toFixed(1)})\n`,
    );
  });
}
