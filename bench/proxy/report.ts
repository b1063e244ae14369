/** The proxy bench's report (bench/proxy/run.ts): a table of the rows, then each target's figure. */
import type { WrkRun } from "./wrk.ts";

export const ROW_NAMES = {
  a: "upstream directly",
  b: "nginx proxy_pass (keep-alive)",
  c: "bare Bun fetch pass-through, body streamed",
  w: "bare Bun fetch pass-through, body read whole (the floor)",
  d: "Switchboard, every check on (defaults: request log on)",
  e: "Switchboard, every call traced (OTLP/HTTP)",
  f: "Switchboard, traces sampled (OTEL_TRACES_SAMPLER_ARG=SAMPLED)",
  g: "Switchboard, every call traced in four spans (OTEL_SPAN_DETAIL=full)",
  p: "Switchboard, scale-out mode (PostgreSQL + Redis)",
  q: "Switchboard, request log off",
} as const;
export type Row = keyof typeof ROW_NAMES;

export interface Measured extends WrkRun {
  /** The server's CPU (every thread; nginx's worker too) per request wrk completed, µs. */
  cpuUs: number;
  peakMb: number;
  /** Traced rows: the collector stand-in's CPU; row (p): Redis's. Seconds. */
  besideCpu: number;
}

export interface Summary {
  header: string;
  sampled: number;
  results: Partial<Record<Row, Measured[]>>;
  /** Calls made to each row, warm-up included (each kept trace should reach its collector). */
  calls: Partial<Record<Row, number>>;
  exported: Partial<Record<Row, { exports: number; bytes: number; spans: number }>>;
  /** Row (d)'s request log: records and bytes its rounds added. */
  log: { records: number; bytes: number } | null;
  uploads: { mode: string; code: string; addedMb: number; baseMb: number }[];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function report(summary: Summary): void {
  const s = {} as Record<Row, { rps: number; p50: number; p99: number; cpu: number; peakMb: number; requests: number }>;
  for (const [row, rs] of Object.entries(summary.results) as [Row, Measured[]][])
    s[row] = {
      rps: mean(rs.map((r) => r.rps)),
      p50: mean(rs.map((r) => r.p50)),
      p99: mean(rs.map((r) => r.p99)),
      cpu: mean(rs.map((r) => r.cpuUs)),
      peakMb: Math.max(...rs.map((r) => r.peakMb)),
      requests: rs.reduce((n, r) => n + r.requests, 0),
    };
  const has = (...rows: Row[]) => rows.every((row) => s[row] !== undefined);
  console.log(`\n${summary.header}\n`);
  console.log("| row | what | req/s | p50 ms | p99 ms | server CPU µs/req | rounds (req/s, CPU µs/req) |");
  console.log("|---|---|---:|---:|---:|---:|---|");
  for (const [row, rs] of Object.entries(summary.results) as [Row, Measured[]][]) {
    const r = s[row];
    const name = ROW_NAMES[row].replace("SAMPLED", String(summary.sampled));
    const each = rs.map((x) => `${Math.round(x.rps)} (${x.cpuUs.toFixed(1)})`).join(" / ");
    const errors = rs.map((x) => x.errors).filter(Boolean);
    console.log(
      `| ${row} | ${name} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpu.toFixed(1)} | ${each}${errors.length ? `; ${errors.join("; ")}` : ""} |`,
    );
  }
  console.log("");
  if (has("d", "w")) {
    console.log(
      `CPU per call (d) - (w) = ${(s.d.cpu - s.w.cpu).toFixed(1)} µs   (Switchboard's own work over the floor; target <= +25 µs)`,
    );
    console.log(`p99 (d) - (w) = ${(s.d.p99 - s.w.p99).toFixed(2)} ms   (target <= +1 ms)`);
    console.log(
      `(d)/(w) = ${(s.d.rps / s.w.rps).toFixed(2)} by req/s, ${(s.w.cpu / s.d.cpu).toFixed(2)} by CPU per call`,
    );
  }
  if (has("q", "w"))
    console.log(
      `CPU per call (q) - (w) = ${(s.q.cpu - s.w.cpu).toFixed(1)} µs, p99 (q) - (w) = ${(s.q.p99 - s.w.p99).toFixed(2)} ms   (log off)`,
    );
  if (has("d", "q")) {
    console.log(
      `(d)/(q) = ${(s.d.rps / s.q.rps).toFixed(2)} by req/s, ${(s.q.cpu / s.d.cpu).toFixed(2)} by CPU per call   (request log on against off; target >= 0.95 by CPU)`,
    );
    const records = summary.log?.records ?? 0;
    const mib = ((summary.log?.bytes ?? 0) / Math.max(1, records)) * (1e6 / 2 ** 20);
    console.log(
      `  the log's CPU per call = ${(s.d.cpu - s.q.cpu).toFixed(1)} µs (all threads); ${records} records written, ${mib.toFixed(0)} MiB of the log's file per million calls`,
    );
  }
  if (has("d", "c")) console.log(`(d)/(c) = ${(s.d.rps / s.c.rps).toFixed(2)} by req/s   (body streamed floor)`);
  if (has("d", "b")) console.log(`(d)/(b) = ${(s.d.rps / s.b.rps).toFixed(2)}   (against nginx; target >= 0.50)`);
  if (has("w", "b")) console.log(`(w)/(b) = ${(s.w.rps / s.b.rps).toFixed(2)}, CPU ${(s.b.cpu / s.w.cpu).toFixed(2)}`);
  if (has("d")) console.log(`peak RSS of Switchboard under load = ${s.d.peakMb.toFixed(0)} MB   (target <= 150 MB)`);
  for (const row of ["e", "f", "g"] as const) {
    if (!has(row, "d")) continue;
    const target = row === "e" ? "; target >= 0.80 by req/s" : "";
    const spans = summary.exported[row];
    const besideUs = ((summary.results[row] ?? []).reduce((n, r) => n + r.besideCpu, 0) * 1e6) / s[row].requests;
    console.log(
      `(${row})/(d) = ${(s[row].rps / s.d.rps).toFixed(2)} by req/s, ${(s.d.cpu / s[row].cpu).toFixed(2)} by CPU per call   (traces on against off${target})`,
    );
    if (spans)
      console.log(
        `  spans received per call = ${(spans.spans / (summary.calls[row] ?? 1)).toFixed(2)} (${row === "g" ? 4 : 1} per kept trace; ${spans.exports} exports, ${(spans.bytes / 1e6).toFixed(0)} MB); collector stand-in ${besideUs.toFixed(1)} µs per call`,
      );
  }
  if (has("p", "d")) {
    const redisUs = ((summary.results.p ?? []).reduce((n, r) => n + r.besideCpu, 0) * 1e6) / s.p.requests;
    console.log(
      `(p)/(d) = ${(s.p.rps / s.d.rps).toFixed(2)} by req/s, ${(s.d.cpu / s.p.cpu).toFixed(2)} by CPU per call; p99 (p) - (d) = ${(s.p.p99 - s.d.p99).toFixed(2)} ms   (scale-out against SQLite; targets >= 0.80, <= +1 ms); Redis ${redisUs.toFixed(1)} µs per call`,
    );
  }
  for (const u of summary.uploads)
    console.log(
      `100 MB ${u.mode} upload: HTTP ${u.code}, RSS ${u.baseMb.toFixed(0)} MB before, +${u.addedMb.toFixed(1)} MB at peak   (target <= 32 MB)`,
    );
}
