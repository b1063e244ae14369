/**
 * Micro-benchmark of the delivery queue's claim path, without HTTP: what a delivery costs when it
 * must be claimed from a backlog (an endpoint was slow or down, or the relay fell behind) instead
 * of starting straight from ingress. Stores BACKLOG due, unleased deliveries for each of 5
 * endpoints, then claims them in batches of each size in BATCHES and records a successful attempt
 * for each, all through `SqliteWebhooks`, printing CPU per delivery.
 * Run: bun bench/webhooks/claim.ts   (env BACKLOG, default 2000; BATCHES, default "1,5,25")
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

const BACKLOG = Number(process.env.BACKLOG ?? 2000);
const BATCHES = (process.env.BATCHES ?? "1,5,25").split(",").map(Number);
const ENDPOINTS = 5;

const dir = mkdtempSync(join(tmpdir(), "switchboard-claim-bench-"));
const store = openSqliteStore(join(dir, "bench.db"), createSealer(new Uint8Array(32).fill(3), cryptoRandom));
const hooks = store.webhooks;
let clock = Date.now();
for (let n = 0; n < ENDPOINTS; n++) {
  await store.directory.createAccount({ id: `acc_claim${n}`, name: `Claim ${n}`, email: `c${n}@example.com`, billingStatus: "active", retention: "24h", maxNumbers: null, createdAt: clock });
  await hooks.createEndpoint({
    id: `ep_claim${n}`, accountId: `acc_claim${n}`, url: `https://receiver.example/${n}`, fields: ["messages"], phoneNumberId: null,
    secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", previousSecret: null, previousSecretExpiresAt: null, enabled: true,
    disabledReason: null, consecutiveFailures: 0, lastSuccessAt: null, warnedAt: null, createdAt: clock, updatedAt: clock,
  });
}
const body = new TextEncoder().encode(JSON.stringify({ object: "whatsapp_business_account", entry: [{ id: "waba", changes: [{ field: "messages", value: { text: "x".repeat(300) } }] }] }));

/** BACKLOG events per endpoint, each with one due delivery that nobody holds. */
async function fillBacklog(): Promise<void> {
  for (let i = 0; i < BACKLOG; i++) {
    const events: NewEvent[] = [];
    const deliveries: NewDelivery[] = [];
    for (let n = 0; n < ENDPOINTS; n++) {
      const eventId = newEventId(cryptoRandom, clock);
      events.push({ id: eventId, accountId: `acc_claim${n}`, receivedAt: clock, body, upstreamSignature: null, fields: ["messages"], isTest: false });
      deliveries.push({ id: newDeliveryId(cryptoRandom, clock), accountId: `acc_claim${n}`, endpointId: `ep_claim${n}`, eventId, nextAttemptAt: clock, replayOf: null, createdAt: clock });
    }
    await hooks.enqueue(events, deliveries);
  }
  clock += 1;
}

for (const limit of BATCHES) {
  await fillBacklog();
  const before = process.cpuUsage();
  let claimed = 0;
  for (;;) {
    const batch = await hooks.claimDue(clock, { limit, perEndpoint: 10, leaseMs: 70_000 });
    if (batch.length === 0) break;
    claimed += batch.length;
    await Promise.all(batch.map((c) => hooks.completeAttempt({
      deliveryId: c.delivery.id, endpointId: c.endpoint.id, attempt: { number: 1, at: clock, statusCode: 200, error: null, responseExcerpt: "ok", durationMs: 1 },
      next: { status: "succeeded" }, effect: "success", deletePayload: false, now: clock, rules: FAILURE_RULES,
    })));
  }
  const cpu = process.cpuUsage(before);
  console.log(`claims of ${limit}: ${claimed} deliveries from a backlog of ${BACKLOG} per endpoint, ${((cpu.user + cpu.system) / claimed).toFixed(1)} µs CPU per delivery (claim + record)`);
}
store.close();
rmSync(dir, { recursive: true, force: true });
