#!/usr/bin/env bun
/**
 * The proxy's own steps, each beside its floor, in CPU time per call on one thread (no load test,
 * no HTTP: what bench/proxy/run.ts's rows (d) and (q) add to row (w) that is Switchboard's own
 * JavaScript). A call is a message send through createProxy's handler with upstream answered by a
 * stub; the floor is row (w)'s handler (read the body, fetch, answer) against the same stub.
 *
 *   bun bench/proxy/steps.ts      (CALLS=100000 ROUNDS=3 by default)
 */
import { hashApiKey } from "../../src/accounts/api-key.ts";
import { parseConfig } from "../../src/config/config.ts";
import type { Deps } from "../../src/deps.ts";
import { rateLimitStep } from "../../src/limits/fail-open.ts";
import { MemoryLimiter } from "../../src/limits/limiter.ts";
import { numberBucket } from "../../src/limits/policy.ts";
import { memoryLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { allowList } from "../../src/proxy/allow-list.ts";
import { authenticate, resolveTarget } from "../../src/proxy/checks.ts";
import { keepResponseHeaders, rateLimitHeaders } from "../../src/proxy/headers.ts";
import { routeMatcher } from "../../src/proxy/match.ts";
import { createProxy } from "../../src/proxy/pipeline.ts";
import { ProofCache } from "../../src/proxy/proof-cache.ts";
import { upstreamQuery } from "../../src/proxy/query.ts";
import { RequestLog } from "../../src/requests/log.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { cryptoRandom, timeOrderedIdSource } from "../../src/runtime/random.ts";
import type { RequestLogStore } from "../../src/store/requests.ts";
import type { ApiKey, PhoneNumber, Waba } from "../../src/store/types.ts";
import { SEND_ANSWER, SEND_HEADERS } from "./send-answer.ts";

const CALLS = Number(process.env.CALLS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const KEY = `px_live_${"a".repeat(32)}`;
const NUMBERS = 1000;

const config = parseConfig({
  APP_SECRET: "bench-app-secret",
  ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64"),
  DATABASE_URL: "file:/nonexistent/bench.db",
  UPSTREAM_URL: "http://127.0.0.1:9",
});
const apiKey = { id: "key_1", accountId: "acc_1", mode: "live", revokedAt: null } as ApiKey;
const waba = {
  wabaId: "900",
  accountId: "acc_1",
  accessToken: "EAAGbench",
  appSecret: null,
  status: "connected",
} as Waba;
const numbers = new Map<string, PhoneNumber>();
for (let i = 0; i < NUMBERS; i++) {
  const id = String(100_000_000_000_000 + i);
  numbers.set(id, {
    phoneNumberId: id,
    wabaId: "900",
    accountId: "acc_1",
    kind: "embedded",
    status: "connected",
    throughputLevel: "STANDARD",
  } as PhoneNumber);
}
const keyHash = hashApiKey(KEY);
const directory = {
  apiKeyByHash: (hash: string) => (hash === keyHash ? apiKey : undefined),
  account: () => ({ billingStatus: "active" }),
  waba: (id: string) => (id === "900" ? waba : undefined),
  number: (id: string) => numbers.get(id),
  numbersOfWaba: () => [...numbers.values()],
};
const answer = SEND_ANSWER;
const upstreamHeaders = {
  ...SEND_HEADERS,
  "content-length": String(answer.length),
  date: "Sat, 28 Nov 2026 07:00:00 GMT",
};
/** Upstream: a fresh answer each call, as fetch gives one. */
const stubFetch = async (_url: string, _init: RequestInit) => new Response(answer, { headers: upstreamHeaders });
const body = '{"messaging_product":"chat","to":"15550100","type":"text","text":{"body":"hello from wrk"}}';
const paths = [...numbers.keys()].map((n) => `/v21.0/${n}/messages`);
const request = (i: number) =>
  new Request(`http://proxy${paths[i % NUMBERS]}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${KEY}`,
      "content-type": "application/json",
      "content-length": String(body.length),
    },
    body,
  });

const nullStore = {
  append: async () => {},
  onWriterTrouble: () => {},
} as unknown as RequestLogStore;
function proxy(logged: boolean) {
  const metrics = createMetrics();
  const deps = {
    config,
    store: { directory },
    clock: systemClock,
    random: cryptoRandom,
    fetch: stubFetch,
    logger: memoryLogger(),
    metrics,
  } as unknown as Deps;
  const log = logged
    ? new RequestLog({ store: nullStore, clock: systemClock, metrics, logger: deps.logger }, 100_000)
    : null;
  const handle = createProxy(deps, new MemoryLimiter(systemClock), log);
  return async (r: Request) => {
    const response = await handle(r);
    await response.arrayBuffer();
    if (log && log["buffer" as keyof RequestLog].length >= 499) await log.flush();
  };
}

/** Row (w)'s handler against the same stub. */
async function bare(r: Request) {
  const url = new URL(r.url);
  const upstream = await stubFetch(`http://up${url.pathname}${url.search}`, {
    method: r.method,
    headers: { "content-type": r.headers.get("content-type") ?? "", authorization: "Bearer upstream-token" },
    body: await r.arrayBuffer(),
  } as RequestInit);
  const response = new Response(upstream.body, {
    status: upstream.status,
    headers: { "content-type": upstream.headers.get("content-type") ?? "" },
  });
  await response.arrayBuffer();
}

async function perCall(run: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < 2000; i++) await run(i);
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await run(i);
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / CALLS;
}

const matchRoute = routeMatcher(allowList(config.platform));
const limiter = new MemoryLimiter(systemClock);
const decide = rateLimitStep(limiter, { logger: memoryLogger(), clock: systemClock, metrics: createMetrics() });
const proofs = new ProofCache(config.appSecret);
const nextId = timeOrderedIdSource(cryptoRandom, "req", 20);
const metrics = createMetrics();
const upstreamAnswer = () => new Response(answer, { headers: upstreamHeaders });
const target = resolveTarget(directory as never, matchRoute("POST", paths[0]!, null)!, "acc_1")!;
const requests = Array.from({ length: NUMBERS }, (_, i) => request(i));

const steps: [string, (i: number) => unknown][] = [
  ["floor: a Request made, row (w)'s handler, the answer read", (i) => bare(request(i))],
  [
    "Switchboard's handler, request log off",
    (() => {
      const p = proxy(false);
      return (i: number) => p(request(i));
    })(),
  ],
  [
    "Switchboard's handler, request log on",
    (() => {
      const p = proxy(true);
      return (i: number) => p(request(i));
    })(),
  ],
  ["  a Request made (in both)", (i) => request(i)],
  ["  1. route match", (i) => matchRoute("POST", paths[i % NUMBERS]!, null)],
  [
    "  2. key: header read, SHA-256, lookup",
    (i) => authenticate(directory as never, requests[i % NUMBERS]!.headers.get("authorization")),
  ],
  ["  4. ownership", (i) => resolveTarget(directory as never, matchRoute("POST", paths[i % NUMBERS]!, null)!, "acc_1")],
  ["  8. bucket (spec + take)", (i) => decide(numberBucket(numbers.get(String(100_000_000_000_000 + (i % NUMBERS)))!))],
  [
    "  RateLimit-* headers and the request id",
    () => ({ ...rateLimitHeaders(decide(numberBucket(target.number!)) as never), "x-proxy-request-id": "req_x" }),
  ],
  ["  appsecret_proof (cached) and the query", () => upstreamQuery(null, proofs.for(waba))],
  ["  request id", () => nextId(Date.now())],
  [
    "  abort controller and time-out timer",
    () => {
      const c = new AbortController();
      const t = setTimeout(() => c.abort(), 30_000);
      clearTimeout(t);
      return c.signal;
    },
  ],
  [
    "  upstream headers pruned in place (with a stub answer)",
    () => keepResponseHeaders(upstreamAnswer().headers, { a: "1", b: "2", c: "3", d: "4" }),
  ],
  ["  a stub answer alone", () => upstreamAnswer()],
  ["  latency histogram observe", () => metrics.upstreamLatency.observe(0.0008)],
];

console.log(
  `${CALLS} calls a step, best of ${ROUNDS} rounds; CPU µs per call on one thread; load average ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`,
);
for (const [what, run] of steps) {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < ROUNDS; r++) best = Math.min(best, await perCall(run));
  console.log(`  ${what.padEnd(60)} ${best.toFixed(2)}`);
}
