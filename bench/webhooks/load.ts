/**
 * What the relay benches share: the receiver process, the accounts they set up, the upstream
 * events they post (one entry per account, so each event is split into one delivery per
 * account), and the open loop that posts them at a steady rate.
 */
import { join } from "node:path";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";

export const BENCH_APP_SECRET = "bench-app-secret";
export const BENCH_ADMIN = "bench-admin";
export const epochNow = () => performance.timeOrigin + performance.now();
export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
export const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

/** The receiver (receiver.ts) in its own process; arrival times are epoch ms, comparable with epochNow(). */
export async function startReceiver() {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "receiver.ts")], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error("receiver did not start");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = `http://127.0.0.1:${Number(text.split("\n")[0])}`;
  return {
    proc,
    url,
    arrived: async () => Number(await (await fetch(`${url}/count`)).text()),
    stats: async () =>
      (await (await fetch(`${url}/stats`)).json()) as {
        count: number;
        cpuMs: number;
        arrivals: Record<string, number[]>;
      },
    /** Waits until `target` deliveries have arrived, or `timeoutMs`; returns how many did. */
    async waitFor(target: number, timeoutMs: number): Promise<number> {
      const deadline = performance.now() + timeoutMs;
      let n = await this.arrived();
      while (n < target && performance.now() < deadline) {
        await Bun.sleep(20);
        n = await this.arrived();
      }
      return n;
    },
  };
}

export async function waitReady(base: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // starting
    }
    await Bun.sleep(50);
  }
  throw new Error(`${base} did not start`);
}

/** An endpoint setupAccounts made, with the session that can change it. */
export interface BenchEndpoint {
  id: string;
  cookie: string;
}

/**
 * `accounts` accounts numbered from `first`, each with a WABA `waba<n>`, a number `pn<n>` and an
 * endpoint on the receiver at `/a<n>`.
 */
export async function setupAccounts(
  base: string,
  accounts: number,
  receiverUrl: string,
  first = 0,
): Promise<BenchEndpoint[]> {
  const endpoints: BenchEndpoint[] = [];
  const adminCall = (method: string, path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${BENCH_ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ id: string }>);
  for (let n = first; n < first + accounts; n++) {
    const account = await adminCall("POST", "/admin/accounts", { name: `Bench ${n}`, email: `bench${n}@example.com` });
    await adminCall("POST", `/admin/accounts/${account.id}/wabas`, { waba_id: `waba${n}`, access_token: "t" });
    await adminCall("POST", `/admin/accounts/${account.id}/numbers`, {
      phone_number_id: `pn${n}`,
      waba_id: `waba${n}`,
      kind: "embedded",
    });
    await adminCall("POST", `/admin/accounts/${account.id}/users`, {
      email: `u${n}@example.com`,
      password: "bench password 1",
    });
    const session = await fetch(`${base}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `u${n}@example.com`, password: "bench password 1" }),
    });
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    const r = await fetch(`${base}/api/endpoints`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ url: `${receiverUrl}/a${n}`, fields: ["messages"] }),
    });
    if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${await r.text()}`);
    endpoints.push({ id: ((await r.json()) as { id: string }).id, cookie });
  }
  return endpoints;
}

/** Sets every endpoint's signature scheme (docs/webhooks.md#signature-schemes). */
export async function setSignature(base: string, endpoints: BenchEndpoint[], signature: string): Promise<void> {
  for (const e of endpoints) {
    const r = await fetch(`${base}/api/endpoints/${e.id}`, {
      method: "PATCH",
      headers: { cookie: e.cookie, "content-type": "application/json" },
      body: JSON.stringify({ signature }),
    });
    if (r.status !== 200) throw new Error(`signature: ${r.status} ${await r.text()}`);
  }
}

/** Event number `i`: one `messages` entry per account (numbered from `first`), signed with the bench's app secret. */
export function benchEvent(
  i: number,
  accounts: number,
  first = 0,
): { body: Uint8Array<ArrayBuffer>; signature: string } {
  const entries = Array.from({ length: accounts }, (_, k) => first + k).map((n) => ({
    id: `waba${n}`,
    changes: [
      {
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550001111", phone_number_id: `pn${n}` },
          contacts: [{ profile: { name: "Bench" }, wa_id: "15550002222" }],
          messages: [
            {
              from: "15550002222",
              id: `wamid.bench.${i}.${n}`,
              timestamp: "1767225600",
              type: "text",
              text: { body: `hello ${i}` },
            },
          ],
        },
      },
    ],
  }));
  const body = new TextEncoder().encode(JSON.stringify({ object: "whatsapp_business_account", entry: entries }));
  return { body, signature: hubSignature(BENCH_APP_SECRET, body) };
}

export type Ack = { sent: number; acked: number };

/** Posts event `i` to `url` (an ingress, or the receiver's reference paths) and times its answer. */
export async function postEvent(url: string, i: number, accounts: number): Promise<Ack> {
  const { body, signature } = benchEvent(i, accounts);
  const sent = epochNow();
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hub-signature-256": signature },
    body,
  });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
  return { sent, acked: epochNow() };
}

/** Posts `rate × seconds` events at `rate` per second (open loop: a slow answer does not delay the next post). */
export async function openLoop(
  rate: number,
  seconds: number,
  post: (i: number) => Promise<Ack>,
): Promise<{ acks: Ack[]; start: number; sendSeconds: number }> {
  const total = rate * seconds;
  const acks: Ack[] = new Array(total);
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    pending.push(
      post(i).then((a) => {
        acks[i] = a;
      }),
    );
  }
  await Promise.all(pending);
  return { acks, start, sendSeconds: (performance.now() - start) / 1000 };
}

/** Posts from `connections` loops as fast as the answers come, for `seconds`; returns how many were acknowledged. */
export async function flatOut(
  connections: number,
  seconds: number,
  post: (i: number) => Promise<Ack>,
): Promise<{ events: number; sendSeconds: number }> {
  const start = performance.now();
  const stopAt = start + seconds * 1000;
  let next = 0;
  let events = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < stopAt) {
        await post(next++);
        events++;
      }
    }),
  );
  return { events, sendSeconds: (performance.now() - start) / 1000 };
}

export const ackLine = (label: string, acks: Ack[]) => {
  const ms = acks.map((a) => a.acked - a.sent).sort((a, b) => a - b);
  return `  ${label.padEnd(25)}p50 ${fmt(pct(ms, 50))}  p99 ${fmt(pct(ms, 99))}  max ${fmt(ms[ms.length - 1]!)}`;
};
