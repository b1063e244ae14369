/**
 * The benchmark's webhook receiver, run as its own process so that receiving 5,000 requests/s does
 * not compete with the sender for one event loop. Prints its port on the first stdout line.
 * GET /stats answers {count, cpuMs, arrivals: {event index: [epoch ms…]}}; GET /count just the count
 * of deliveries answered 200; GET /outage?ms=N answers every delivery 503 for the next N ms.
 * POST /durable appends the body to a file (in DB_DIR, or the temporary directory) and answers once
 * an fdatasync that began after the write has ended, shared as the server shares its WAL syncs:
 * the least a durable ack costs on this machine's disk, with nothing else to do.
 */
import { mkdtempSync, rmSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedSync } from "../../src/store/sqlite/wal-sync.ts";

const durableDir = mkdtempSync(join(process.env.DB_DIR ?? tmpdir(), "switchboard-bench-durable-"));
const durableLog = await open(join(durableDir, "log"), "w");
const durable = sharedSync(() => durableLog.datasync());
process.on("SIGTERM", () => {
  rmSync(durableDir, { recursive: true, force: true });
  process.exit(0);
});
let count = 0;
let outageUntil = 0;
const arrivals: Record<number, number[]> = {};
const epochNow = () => performance.timeOrigin + performance.now();

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (req.method === "GET") {
      const path = new URL(req.url).pathname;
      if (path === "/count") return new Response(String(count));
      if (path === "/outage") {
        outageUntil = performance.now() + Number(new URL(req.url).searchParams.get("ms"));
        return new Response("ok");
      }
      const cpu = process.cpuUsage();
      return Response.json({ count, cpuMs: (cpu.user + cpu.system) / 1000, arrivals });
    }
    if (new URL(req.url).pathname === "/durable") {
      writeSync(durableLog.fd, new Uint8Array(await req.arrayBuffer()));
      await durable();
      return new Response("ok");
    }
    const body = await req.text();
    if (performance.now() < outageUntil) return new Response("down", { status: 503 });
    const at = epochNow();
    const match = /wamid\.bench\.(\d+)\./.exec(body);
    if (match) {
      const seq = Number(match[1]);
      arrivals[seq] ??= [];
      arrivals[seq].push(at);
    }
    count++;
    return new Response("ok");
  },
});
console.log(server.port);
