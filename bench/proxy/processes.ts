/**
 * The proxy bench's processes: each server its own child on loopback, its CPU and memory read from
 * /proc, and everything started stopped at the end (stopAll).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = resolve(import.meta.dir, "../..");
export const ADMIN_TOKEN = "bench-admin-token";
const children: Subprocess[] = [];

export async function freePort(): Promise<number> {
  const socket = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = socket.port;
  socket.stop(true);
  return port;
}

export async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await Bun.sleep(50);
    }
  }
  throw new Error(`nothing answered at ${url}`);
}

export function start(cmd: string[], env: Record<string, string> = {}): Subprocess {
  const child = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: "ignore", stderr: "inherit" });
  children.push(child);
  return child;
}

export async function stopAll(): Promise<void> {
  for (const child of children) child.kill();
  await Promise.all(children.map((c) => c.exited));
}

/** The load average now, as /proc gives it (1, 5 and 15 minutes). */
export const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

export function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Runs `task` while sampling a process's RSS every 20 ms; returns its result and the peak seen (MB). */
export async function sampling<T>(pid: number, task: Promise<T>): Promise<{ result: T; peakMb: number }> {
  let peak = status(pid, "VmRSS");
  const timer = setInterval(() => (peak = Math.max(peak, status(pid, "VmRSS"))), 20);
  const result = await task;
  clearInterval(timer);
  return { result, peakMb: Math.max(peak, status(pid, "VmRSS")) };
}

/** CPU seconds (user + system, every thread) used so far by a process and its children (nginx's worker). */
export function cpuSeconds(pid: number): number {
  const ticks = (p: number) => {
    const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  let total = ticks(pid);
  for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean))
    total += ticks(Number(child));
  return total / 100;
}

/** Switchboard (`src/main.ts serve`) in front of the fake upstream, on a database of its own. */
export async function startSwitchboard(
  upstreamPort: number,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: Subprocess }> {
  const port = await freePort();
  const child = start([process.execPath, "src/main.ts", "serve"], {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: databaseUrl,
    UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
    APP_SECRET: "bench-app-secret",
    ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64"),
    ADMIN_TOKEN,
    DEV_MODE: "0",
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/healthz`);
  return { url, child };
}

/** A 100 MB media upload with curl, chunked or with its length declared; returns the HTTP status. */
export async function upload(url: string, key: string, mode: "chunked" | "declared", file: string): Promise<string> {
  const args = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"];
  args.push("-H", `Authorization: Bearer ${key}`, "-H", "Content-Type: application/octet-stream");
  if (mode === "chunked") args.push("-H", "Transfer-Encoding: chunked");
  const child = Bun.spawn([...args, "--data-binary", `@${file}`, `${url}/v21.0/100000000000000/media`], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const code = await new Response(child.stdout).text();
  await child.exited;
  return code;
}
