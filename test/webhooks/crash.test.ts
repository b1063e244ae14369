import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { admin, TEST_APP_SECRET, tempDir } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { messageChange } from "./support.ts";

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

/** Account `n`: a WABA, a number and a user, and an endpoint on the receiver per item of `endpoints` (its extra fields). */
async function account(url: string, n: number, receiverPort: number, endpoints: Record<string, string>[]) {
  const created = (await (await admin(url, "POST", "/admin/accounts", { name: `A${n}`, email: `a${n}@example.com` })).json()) as { id: string };
  await admin(url, "POST", `/admin/accounts/${created.id}/wabas`, { waba_id: `waba${n}`, access_token: "t" });
  await admin(url, "POST", `/admin/accounts/${created.id}/numbers`, { phone_number_id: `pn${n}`, waba_id: `waba${n}`, kind: "embedded" });
  await admin(url, "POST", `/admin/accounts/${created.id}/users`, { email: `u${n}@example.com`, password: "correct horse battery" });
  const session = await fetch(`${url}/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: `u${n}@example.com`, password: "correct horse battery" }) });
  const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
  const paths: string[] = [];
  for (const [i, extra] of endpoints.entries()) {
    const path = `/a${n}/e${i}`;
    const r = await fetch(`${url}/api/endpoints`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}${path}`, fields: ["messages"], ...extra }),
    });
    expect(r.status).toBe(201);
    paths.push(path);
  }
  return { waba: `waba${n}`, number: `pn${n}`, endpoints: paths };
}

function postEvent(url: string, entries: unknown[]) {
  const body = JSON.stringify({ object: "whatsapp_business_account", entry: entries });
  return fetch(`${url}/webhooks/upstream`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hub-signature-256": hubSignature(TEST_APP_SECRET, new TextEncoder().encode(body)) },
    body,
  });
}

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
  for (const n of [1, 2]) accounts.push(await account(url, n, receiver.port!, [{}, { phone_number_id: `pn${n}` }]));

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
  held.splice(0).forEach((release) => release());

  port = freePort();
  proc = start(dbPath, port);
  url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/healthz`);

  const complete = () => [...expected].every(([endpoint, ids]) => [...ids].every((id) => seen.get(endpoint)?.has(id)));
  const deadline = Date.now() + 20_000;
  while (!complete() && Date.now() < deadline) await Bun.sleep(20);
  for (const [endpoint, ids] of expected) expect([endpoint, [...ids].filter((id) => !seen.get(endpoint)?.has(id))]).toEqual([endpoint, []]);
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
  const a = await account(url, 1, receiver.port!, [{}]);
  expect((await postEvent(url, [{ id: a.waba, changes: [messageChange(a.number, "retry me")] }])).status).toBe(200);

  // The first attempt fails at once; nothing but the tick claims the retry, within about a second.
  const deadline = Date.now() + 10_000;
  while (arrivals.length < 2 && Date.now() < deadline) await Bun.sleep(20);
  expect(arrivals).toHaveLength(2);
  expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(100);
}, 20_000);
