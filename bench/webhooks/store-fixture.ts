import { endpointRow } from "../../test/support/queue-rows.ts";
/**
 * What the store-level benchmarks (store.ts, claim.ts, commit-latency.ts, purge.ts, pending.ts)
 * share: a fresh SQLite store on a temporary file with one account and one `messages` endpoint per
 * account, the rows the queue's hot path writes, and a measure of event-loop stalls.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../../src/store/sqlite/store.ts";
import type { DeliveryQueue } from "../../src/store/queue.ts";
import type { NewDelivery, NewEvent } from "../../src/store/queue.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { FAILURE_RULES } from "../../src/webhooks/outcome.ts";

export interface BenchEndpoint {
  id: string;
  accountId: string;
}

/** An upstream event's worth of bytes (one entry, a short text message). */
const body = new TextEncoder().encode(
  JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{ id: "waba", changes: [{ field: "messages", value: { text: "x".repeat(300) } }] }],
  }),
);

/** Opens the store in a new directory under `parent` (the system's temporary one by default). */
export async function benchStore(
  accounts: number,
  options: SqliteStoreOptions & { parent?: string } = {},
): Promise<{
  store: SqliteStore;
  endpoints: BenchEndpoint[];
  /** The WAL file's size now. */
  walBytes(): number;
  close(): void;
}> {
  const dir = mkdtempSync(join(options.parent ?? tmpdir(), "switchboard-store-bench-"));
  const path = join(dir, "bench.db");
  const store = openSqliteStore(path, createSealer(new Uint8Array(32).fill(3), cryptoRandom), options);
  const now = Date.now();
  const endpoints: BenchEndpoint[] = [];
  for (let n = 0; n < accounts; n++) {
    const endpoint = { id: `ep_bench${n}`, accountId: `acc_bench${n}` };
    await store.directory.createAccount({
      id: endpoint.accountId,
      name: `Bench ${n}`,
      email: `b${n}@example.com`,
      billingStatus: "active",
      retention: "24h",
      maxNumbers: null,
      createdAt: now,
    });
    await store.endpoints.create({
      ...endpointRow(endpoint.id, endpoint.accountId, now),
      url: `https://receiver.example/${n}`,
    });
    endpoints.push(endpoint);
  }
  return {
    store,
    endpoints,
    walBytes: () => Bun.file(`${path}-wal`).size,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The lease eventAndDelivery's leased deliveries are stored under. */
export const BENCH_LEASE = "lease_bench";

/** One event for `endpoint`'s account and its first delivery, due at `at`; leased until `leaseUntil` when given (as ingress stores it). */
export function eventAndDelivery(
  endpoint: BenchEndpoint,
  at: number,
  leaseUntil?: number,
): { event: NewEvent; delivery: NewDelivery } {
  const event: NewEvent = {
    id: newEventId(cryptoRandom, at),
    accountId: endpoint.accountId,
    receivedAt: at,
    body,
    upstreamSignature: null,
    fields: ["messages"],
    isTest: false,
  };
  const delivery: NewDelivery = {
    id: newDeliveryId(cryptoRandom, at),
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    eventId: event.id,
    nextAttemptAt: at,
    replayOf: null,
    signature: "standard",
    createdAt: at,
    lease: leaseUntil === undefined ? undefined : { id: BENCH_LEASE, until: leaseUntil },
  };
  return { event, delivery };
}

/** Records a first attempt of `delivery`, held under `leaseId`, answered 200. */
export function recordSuccess(
  queue: DeliveryQueue,
  delivery: Pick<NewDelivery, "id" | "endpointId">,
  at: number,
  leaseId = BENCH_LEASE,
): Promise<unknown> {
  return queue.completeAttempt({
    deliveryId: delivery.id,
    leaseId,
    endpointId: delivery.endpointId,
    attempt: { number: 1, at, statusCode: 200, error: null, responseExcerpt: "ok", durationMs: 1 },
    next: { status: "succeeded" },
    effect: "success",
    deletePayload: false,
    now: at,
    rules: FAILURE_RULES,
  });
}

/**
 * Runs `work`; gives its time, and the longest gap between runs of a 1 ms timer meanwhile (what a
 * request arriving then would wait for at most).
 */
export async function stallDuring(work: () => Promise<unknown>): Promise<{ ms: number; longestStallMs: number }> {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const t = performance.now();
    longest = Math.max(longest, t - last);
    last = t;
  }, 1);
  await Bun.sleep(20);
  longest = 0;
  last = performance.now();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  await Bun.sleep(5);
  clearInterval(timer);
  return { ms, longestStallMs: longest };
}
