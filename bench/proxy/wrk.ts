/**
 * What the benches that load the proxy share: the account they load (one live key, one WABA and
 * many numbers, so that no number passes its 80/s bucket), wrk's script of message sends spread
 * over those numbers, and a wrk run's figures. Needs `wrk` (Debian: apt-get install -y wrk).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CONNECTIONS = 50;

export interface WrkRun {
  rps: number;
  p50: number;
  p99: number;
  /** wrk's count of non-2xx answers and socket errors, if any. */
  errors: string | null;
  requests: number;
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text)!;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
}

/** wrk -t2 with CONNECTIONS connections for `seconds` against `url`, running `script`. */
export async function wrk(url: string, script: string, seconds: number): Promise<WrkRun> {
  const child = Bun.spawn(["wrk", "-t2", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-s", script, url], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(child.stdout).text();
  await child.exited;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: ms(/ 50%\s+(\S+)/.exec(out)![1]!),
    p99: ms(/ 99%\s+(\S+)/.exec(out)![1]!),
    errors: /Non-2xx or 3xx responses: \d+|Socket errors:.*/.exec(out)?.[0] ?? null,
    requests: Number(/(\d+) requests in/.exec(out)?.[1]),
  };
}

/** The numbers a bench account has: `count` ids from 100000000000000 on. */
export const benchNumbers = (count: number) => Array.from({ length: count }, (_, i) => String(100_000_000_000_000 + i));

/**
 * Requests a second over all connections when a run is paced (PACE; 0, the default: each
 * connection sends again as soon as it is answered, the machine's full speed). Paced below every
 * row's capacity, p99 is the tail a call has, not the queue that 50 connections at full speed
 * make (latency = connections / throughput there).
 */
export const PACE = Number(process.env.PACE ?? 0);

/** wrk's script of message sends with `key`, spread over `numbers`, written to `scriptPath`. */
export function writeLoadScript(scriptPath: string, key: string, numbers: string[]): void {
  writeFileSync(
    scriptPath,
    readFileSync(join(import.meta.dir, "load.lua.template"), "utf8")
      .replace("__PATHS__", numbers.map((n) => `"/v21.0/${n}/messages"`).join(", "))
      .replace("__KEY__", key)
      .replace("__PAUSE_MS__", String(PACE > 0 ? Math.round((CONNECTIONS * 1000) / PACE) : 0)),
  );
}

async function admin(base: string, token: string, path: string, body: unknown): Promise<{ id: string; key: string }> {
  const r = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: string; key: string };
}

/**
 * One account, one live key, one WABA and `count` numbers through the operator API of `base`, and
 * wrk's script of sends over them written to `scriptPath`.
 */
export async function seedProxyLoad(
  base: string,
  adminToken: string,
  count: number,
  scriptPath: string,
): Promise<{ key: string; numbers: string[] }> {
  const account = await admin(base, adminToken, "/admin/accounts", { name: "Bench", email: "bench@example.com" });
  const { key } = await admin(base, adminToken, `/admin/accounts/${account.id}/api-keys`, { mode: "live" });
  await admin(base, adminToken, `/admin/accounts/${account.id}/wabas`, {
    waba_id: "900000000000001",
    access_token: "EAAGbench",
  });
  const numbers = benchNumbers(count);
  for (let i = 0; i < numbers.length; i += 25) {
    await Promise.all(
      numbers.slice(i, i + 25).map((id) =>
        admin(base, adminToken, `/admin/accounts/${account.id}/numbers`, {
          phone_number_id: id,
          waba_id: "900000000000001",
          kind: "embedded",
        }),
      ),
    );
  }
  writeLoadScript(scriptPath, key, numbers);
  return { key, numbers };
}
