#!/usr/bin/env bun
/**
 * Issue 40 item 6: would an upstream client on Bun's TCP sockets (bench/proxy/socket-client.ts)
 * lower the runtime's floor? Two measures against the fake upstream (bench/proxy/upstream.ts):
 *   1. in this process, CALLS message sends at CONCURRENCY with Bun fetch and with the socket
 *      client, rounds interleaved: this process's CPU (every thread) per call;
 *   2. row (w)'s bare pass-through (bench/proxy/bare.ts, body read whole) with each client, under
 *      wrk (50 connections), rounds interleaved: the server's CPU per call, req/s and p99.
 * The criterion: keep a socket client only if it is >= 1.3x better by CPU per call in measure 2.
 *
 *   flock /tmp/switchboard-heavy.lock bun bench/proxy/socket-floor.ts
 *   (CALLS=50000 CONCURRENCY=50 ROUNDS=3 BENCH_SECONDS=10)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, freePort, loadAverage, start, stopAll, waitFor } from "./processes.ts";
import { socketFetch } from "./socket-client.ts";
import { benchNumbers, wrk, writeLoadScript } from "./wrk.ts";

const CALLS = Number(process.env.CALLS ?? 50_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BODY = '{"messaging_product":"chat","to":"15550100","type":"text","text":{"body":"hello from wrk"}}';
const clients = { fetch, socket: socketFetch as typeof fetch };
type Client = keyof typeof clients;

/** CALLS sends through `client`, CONCURRENCY at a time; this process's CPU µs per call. */
async function inProcess(client: Client, upstream: string): Promise<number> {
  const call = clients[client];
  let left = CALLS;
  const worker = async () => {
    while (left-- > 0) {
      const response = await call(`${upstream}/v21.0/100000000000000/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer upstream-token" },
        body: new TextEncoder().encode(BODY),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${client}: ${response.status}`);
    }
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

async function passThrough(client: Client, upstream: string): Promise<{ url: string; pid: number }> {
  const port = await freePort();
  const child = start([process.execPath, "bench/proxy/bare.ts"], {
    PORT: String(port),
    UPSTREAM_URL: upstream,
    BODY: "whole",
    CLIENT: client,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url);
  return { url, pid: child.pid };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (xs: number[], digits = 1) =>
  `${mean(xs).toFixed(digits)} (${xs.map((x) => x.toFixed(digits)).join(" / ")})`;

async function main(work: string) {
  console.log(`load average before ${loadAverage()}`);
  const port = await freePort();
  start([process.execPath, "bench/proxy/upstream.ts"], { PORT: String(port) });
  const upstream = `http://127.0.0.1:${port}`;
  await waitFor(upstream);

  const names = Object.keys(clients) as Client[];
  const cpu = { fetch: [] as number[], socket: [] as number[] };
  for (const client of names) await inProcess(client, upstream); // warm-up
  for (let round = 0; round < ROUNDS; round++)
    for (const client of names) cpu[client].push(await inProcess(client, upstream));
  console.log(`\n1. in-process, ${CALLS} sends at ${CONCURRENCY} concurrent, CPU µs per call (mean (rounds)):`);
  for (const client of names) console.log(`   ${client.padEnd(6)} ${fmt(cpu[client], 2)}`);
  console.log(`   fetch / socket: ${(mean(cpu.fetch) / mean(cpu.socket)).toFixed(2)}x   load ${loadAverage()}`);

  const script = join(work, "plain.lua");
  writeLoadScript(script, "px_live_unchecked", benchNumbers(1000));
  const servers = { fetch: await passThrough("fetch", upstream), socket: await passThrough("socket", upstream) };
  const row = () => ({ rps: [] as number[], p99: [] as number[], cpu: [] as number[] });
  const rows: Record<Client, ReturnType<typeof row>> = { fetch: row(), socket: row() };
  for (const client of names) await wrk(servers[client].url, script, 2); // warm-up
  for (let round = 0; round < ROUNDS; round++)
    for (const client of names) {
      const before = cpuSeconds(servers[client].pid);
      const run = await wrk(servers[client].url, script, SECONDS);
      if (run.errors) throw new Error(`${client}: ${run.errors}`);
      rows[client].cpu.push(((cpuSeconds(servers[client].pid) - before) * 1e6) / run.requests);
      rows[client].rps.push(run.rps);
      rows[client].p99.push(run.p99);
    }
  console.log(`\n2. bare pass-through (body read whole), wrk -t2 -c50 -d${SECONDS}s, ${ROUNDS} rounds interleaved:`);
  console.log("| client | req/s | p99 ms | server CPU µs/call |\n|---|---:|---:|---:|");
  for (const client of names) {
    const r = rows[client];
    console.log(`| ${client} | ${fmt(r.rps, 0)} | ${fmt(r.p99, 2)} | ${fmt(r.cpu)} |`);
  }
  const ratio = mean(rows.fetch.cpu) / mean(rows.socket.cpu);
  console.log(
    `fetch / socket by CPU per call: ${ratio.toFixed(2)}x (target >= 1.3x: ${ratio >= 1.3 ? "met" : "not met"})`,
  );
  console.log(`load average after ${loadAverage()}`);
}

const work = mkdtempSync(join(tmpdir(), "switchboard-socket-floor-"));
try {
  await main(work);
} finally {
  await stopAll();
  rmSync(work, { recursive: true, force: true });
}
