#!/usr/bin/env bun
/**
 * The garbage collector's pauses per heap, from JavaScriptCore's own log (issue 40's tail): run a
 * bench with BUN_JSC_logGC=1 and its standard error in a file, then read that file here. Each
 * thread of each bun process has a heap of its own, named by its address; the largest is the
 * serving thread of the process under load (its workers' heaps share its address's leading digits).
 *
 * Each heap's allocation is what it grew by between one collection's end and the next one's start;
 * given the calls the run made (CALLS), it is shown per call: what sets how often the collector
 * pauses the serving thread.
 *
 *   BUN_JSC_logGC=1 PACE=2000 ROWS=d ROUNDS=1 bun bench/proxy/run.ts 2> gc.log; bun bench/proxy/gc-pauses.ts gc.log
 *   BUN_JSC_logGC=1 ROWS=d ROUNDS=1 bun bench/proxy/threads.ts 2> gc.log; CALLS=<its calls> bun bench/proxy/gc-pauses.ts gc.log
 */
import { readFileSync } from "node:fs";

const END =
  /\[GC<(0x[0-9a-f]+)>: START M (\d+)kb => (\w+)Collection.* => (\d+)kb, p=([\d.]+)ms \(max [\d.]+\), cycle [\d.]+ms END/;
const CALLS = Number(process.env.CALLS ?? 0);
const heaps = new Map<string, { kb: number; eden: number[]; full: number[]; afterKb: number; allocatedKb: number }>();
for (const line of readFileSync(process.argv[2]!, "utf8").split("\n")) {
  const m = END.exec(line);
  if (!m) continue;
  const heap = heaps.get(m[1]!) ?? { kb: 0, eden: [], full: [], afterKb: -1, allocatedKb: 0 };
  heaps.set(m[1]!, heap);
  heap.kb = Math.max(heap.kb, Number(m[2]));
  if (heap.afterKb >= 0) heap.allocatedKb += Number(m[2]) - heap.afterKb;
  heap.afterKb = Number(m[4]);
  (m[3] === "Eden" ? heap.eden : heap.full).push(Number(m[5]));
}
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
for (const [name, h] of [...heaps].sort((a, b) => b[1].kb - a[1].kb)) {
  const all = [...h.eden, ...h.full];
  console.log(
    `heap ${name}, up to ${(h.kb / 1024).toFixed(0)} MB: ${h.eden.length} eden collections (${sum(h.eden).toFixed(0)} ms paused), ` +
      `${h.full.length} full (${sum(h.full).toFixed(0)} ms); pauses over 2 ms ${all.filter((p) => p > 2).length}, longest ${Math.max(...all).toFixed(1)} ms; ` +
      `${(h.allocatedKb / 1024).toFixed(0)} MB allocated${CALLS > 0 ? `, ${((h.allocatedKb * 1024) / CALLS).toFixed(0)} bytes a call` : ""}`,
  );
}
