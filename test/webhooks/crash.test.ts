import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { messageChange, postUpstream, relayAccount } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function start(dbPath: string, port: number, env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
    cwd: ROOT,
    env: processEnv(dbPath, { PORT: String(port), HOST: "127.0.0.1", DEV_MODE: "1", LOG_LEVEL: "warn", ...env }),
    stdout: "ignore",
    stderr: "inherit",
  });
  cleanups.push(() => proc.kill("SIGKILL"));
  return proc;
}

/**
 * An account on the server at `url` with an endpoint on the receiver per item of `firstNumberOnly`
 * (true: for the account's number only), each at its own path; returns the paths.
 */
async function accountWithEndpoints(url: string, n: number, receiverPort: number, firstNumberOnly: boolean[]) {
  const a = await relayAccount(url);
  const endpoints: string[] = [];
  for (const [i, only] of firstNumberOnly.entries()) {
    const path = `/a${n}/e${i}`;
    await a.endpoint(`http://127.0.0.1:${receiverPort}${path}`, ["messages"], only ? a.numbers[0] : undefined);
    endpoints.push(path);
  }
  return { waba: a.wabaId, number: a.numbers[0]!, endpoints };
}

const postEvent = (url: string, entries: unknown[]) =>
  postUpstream(url, JSON.stringify({ object: "whatsapp_business_account", entry: entries }));

test("kill -9 while deliveries are in flight, restart on the same file: every acknowledged event reaches every matching endpoint", async () => {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const dbPath = join(dir.path, "crash.db");

  // The receiver holds every request until the first process is dead, so attempts are in flight when it dies.
  let holding = true;
  const held: (() => void)[] = [];
  const seen = new Map<string, Set<string>>();
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const endpoint = new URL(req.url).pathname;
      const body = await req.text();
      // A held request is never answered while its sender lives: only answered ones count as received.
      if (holding) return new Promise<Response>((resolve) => held.push(() => resolve(new Response("late"))));
      for (const match of body.matchAll(/"id":"(wamid\.[^"]+)"/g)) {
        const set = seen.get(endpoint) ?? new Set<string>();
        set.add(match[1]!);
        seen.set(endpoint, set);
      }
      return new Response("ok");
    },
  });
  cleanups.push(() => receiver.stop(true));

  let port = freePort();
  let proc = start(dbPath, port);
  let url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/healthz`);

  // Two accounts, each with two endpoints (one for all numbers, one for the first number only).
  const accounts = [];
  for (const n of [1, 2]) accounts.push(await accountWithEndpoints(url, n, receiver.port!, [false, true]));

  // Events spanning both accounts; remember what each acknowledged event must bring to each endpoint.
  const expected = new Map<string, Set<string>>();
  for (let i = 0; i < 40; i++) {
    const entries = accounts.map((a) => ({ id: a.waba, changes: [messageChange(a.number, `event ${i}`)] }));
    expect((await postEvent(url, entries)).status).toBe(200);
    for (const [k, a] of accounts.entries()) {
      const id = entries[k]!.changes[0]!.value.messages[0]!.id;
      for (const endpoint of a.endpoints) {
        const set = expected.get(endpoint) ?? new Set<string>();
        set.add(id);
        expected.set(endpoint, set);
      }
    }
  }
  // Attempts are in flight: 10 per endpoint held open by the receiver.
  while (held.length < 40) await Bun.sleep(5);
  proc.kill("SIGKILL");
  await proc.exited;
  holding = false;
  for (const release of held.splice(0)) release();

  port = freePort();
  proc = start(dbPath, port);
  url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/healthz`);

  const complete = () => [...expected].every(([endpoint, ids]) => [...ids].every((id) => seen.get(endpoint)?.has(id)));
  const deadline = Date.now() + 20_000;
  while (!complete() && Date.now() < deadline) await Bun.sleep(20);
  for (const [endpoint, ids] of expected)
    expect([endpoint, [...ids].filter((id) => !seen.get(endpoint)?.has(id))]).toEqual([endpoint, []]);
  expect(expected.size).toBe(4);
}, 40_000);

test("the running server's own once-a-second tick (the system clock's) sends a retry when it falls due", async () => {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const arrivals: number[] = [];
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      arrivals.push(Date.now());
      return new Response(null, { status: arrivals.length === 1 ? 500 : 200 });
    },
  });
  cleanups.push(() => receiver.stop(true));
  const port = freePort();
  start(join(dir.path, "tick.db"), port, { WEBHOOK_RETRY_SCHEDULE: "100ms" });
  const url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/healthz`);
  const a = await accountWithEndpoints(url, 1, receiver.port!, [false]);
  expect((await postEvent(url, [{ id: a.waba, changes: [messageChange(a.number, "retry me")] }])).status).toBe(200);

  // The first attempt fails at once; nothing but the tick claims the retry, within about a second.
  const deadline = Date.now() + 10_000;
  while (arrivals.length < 2 && Date.now() < deadline) await Bun.sleep(20);
  expect(arrivals).toHaveLength(2);
  expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(100);
}, 20_000);
