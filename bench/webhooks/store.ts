/**
 * Micro-benchmark of the delivery queue's SQLite hot path, without HTTP: what one delivery costs
 * the store (enqueue leased, then record a successful attempt), in CPU per delivery. Mirrors the
 * server's shape: each turn stores EVENTS_PER_TURN upstream events of ACCOUNTS entries (one event
 * row and one delivery per account) and completes the deliveries stored by the previous turn.
 * Run: bun bench/webhooks/store.ts   (env TURNS, EVENTS_PER_TURN, ACCOUNTS override the defaults)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import type { NewDelivery, NewEvent } from "../../src/store/webhooks.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { FAILURE_RULES } from "../../src/webhooks/outcome.ts";

const TURNS = Number(process.env.TURNS ?? 4000);
const EVENTS_PER_TURN = Number(process.env.EVENTS_PER_TURN ?? 5);
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 5);

const dir = mkdtempSync(join(tmpdir(), "switchboard-store-bench-"));
const store = openSqliteStore(join(dir, "bench.db"), createSealer(new Uint8Array(32).fill(3), cryptoRandom));
const hooks = store.webhooks;
let clock = Date.now();
const endpoints: { id: string; accountId: string }[] = [];
for (let n = 0; n < ACCOUNTS; n++) {
  const accountId = `acc_bench${n}`;
  await store.directory.createAccount({ id: accountId, name: `Bench ${n}`, email: `b${n}@example.com`, billingStatus: "active", retention: "24h", maxNumbers: null, createdAt: clock });
  const id = `ep_bench${n}`;
  await hooks.createEndpoint({
    id, accountId, url: `https://receiver.example/${n}`, fields: ["messages"], phoneNumberId: null, secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", previousSecret: null,
    previousSecretExpiresAt: null, enabled: true, disabledReason: null, consecutiveFailures: 0, lastSuccessAt: null, warnedAt: null, createdAt: clock, updatedAt: clock,
  });
  endpoints.push({ id, accountId });
}
const body = new TextEncoder().encode(JSON.stringify({ object: "whatsapp_business_account", entry: [{ id: "waba", changes: [{ field: "messages", value: { text: "x".repeat(300) } }] }] }));

function turnWork(): { events: NewEvent[]; deliveries: NewDelivery[] } {
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  for (let e = 0; e < EVENTS_PER_TURN; e++) {
    for (const ep of endpoints) {
      const eventId = newEventId(cryptoRandom, clock);
      events.push({ id: eventId, accountId: ep.accountId, receivedAt: clock, body, upstreamSignature: null, fields: ["messages"], isTest: false });
      deliveries.push({ id: newDeliveryId(cryptoRandom, clock), accountId: ep.accountId, endpointId: ep.id, eventId, nextAttemptAt: clock, replayOf: null, createdAt: clock, leaseUntil: clock + 70_000 });
    }
  }
  return { events, deliveries };
}

const cpu = () => {
  const c = process.cpuUsage();
  return { user: c.user / 1000, system: c.system / 1000 };
};
let previous: NewDelivery[] = [];
const run = async (turns: number) => {
  for (let t = 0; t < turns; t++) {
    clock += 1;
    const { events, deliveries } = turnWork();
    const work: Promise<unknown>[] = [hooks.enqueue(events, deliveries)];
    for (const d of previous) {
      work.push(hooks.completeAttempt({
        deliveryId: d.id, endpointId: d.endpointId, attempt: { number: 1, at: clock, statusCode: 200, error: null, responseExcerpt: "ok", durationMs: 1 },
        next: { status: "succeeded" }, effect: "success", deletePayload: false, now: clock, rules: FAILURE_RULES,
      }));
    }
    await Promise.all(work);
    previous = deliveries;
  }
};
await run(Math.min(500, TURNS)); // warm-up: JIT, prepared statements, a table that is not empty
const before = cpu();
const started = performance.now();
await run(TURNS);
const wall = performance.now() - started;
const after = cpu();
const n = TURNS * EVENTS_PER_TURN * ACCOUNTS;
const per = (ms: number) => `${((ms * 1000) / n).toFixed(1)} µs`;
console.log(`store: ${n} deliveries in ${TURNS} turns of ${EVENTS_PER_TURN * ACCOUNTS}: ${(n / (wall / 1000)).toFixed(0)} deliveries/s; CPU per delivery ${per(after.user - before.user + after.system - before.system)} (user ${per(after.user - before.user)}, system ${per(after.system - before.system)}), wall ${per(wall)}`);
store.close();
rmSync(dir, { recursive: true, force: true });
