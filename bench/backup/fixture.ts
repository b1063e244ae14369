import { endpointRow } from "../../test/support/queue-rows.ts";
/**
 * A deployment's database grown to a given size before the backup bench starts its server: an
 * account whose endpoint has received many events, each delivered once (an event's body, its
 * delivery and its attempt, as the relay stores them), all within retention so that no purge runs
 * during the bench. Written straight into the file, many rows per transaction.
 */
import { statSync } from "node:fs";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";

const BATCH = 10_000;

/** Grows the database at `path` (created with this build's schema) to at least `megabytes`. */
export async function growDatabase(path: string, megabytes: number, key: Uint8Array): Promise<number> {
  const store = openSqliteStore(path, createSealer(key, cryptoRandom));
  const now = Date.now();
  const accountId = "acc_history";
  const endpointId = "ep_history";
  await store.directory.createAccount({
    id: accountId,
    name: "History",
    email: "history@example.com",
    billingStatus: "active",
    retention: "7d",
    maxNumbers: null,
    createdAt: now,
  });
  await store.endpoints.create({ ...endpointRow(endpointId, accountId, now), url: "https://receiver.example/history" });
  const sqlite = store.db.$client;
  const event = sqlite.prepare(
    "INSERT INTO events (id, account_id, received_at, body, upstream_signature, fields, is_test) VALUES (?, ?, ?, ?, NULL, '[\"messages\"]', 0)",
  );
  const delivery =
    sqlite.prepare(`INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, attempt_count, payload_deleted, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'succeeded', 1, 0, ?, ?)`);
  const attempt = sqlite.prepare(
    "INSERT INTO attempts (delivery_id, number, at, status_code, error, response_excerpt, duration_ms) VALUES (?, 1, ?, 200, NULL, 'ok', 12)",
  );
  const batch = sqlite.transaction((from: number) => {
    for (let i = from; i < from + BATCH; i++) {
      const at = now - 3_600_000 + (i % 3_600_000);
      const body = JSON.stringify({
        object: "whatsapp_business_account",
        entry: [
          {
            id: "waba_history",
            changes: [
              {
                field: "messages",
                value: {
                  messaging_product: "whatsapp",
                  metadata: { display_phone_number: "15550001111", phone_number_id: "pn_history" },
                  contacts: [
                    {
                      profile: { name: `Customer ${i % 5000}` },
                      wa_id: `1555${String(i % 10_000_000).padStart(7, "0")}`,
                    },
                  ],
                  messages: [
                    {
                      from: `1555${String(i % 10_000_000).padStart(7, "0")}`,
                      id: `wamid.${crypto.randomUUID()}`,
                      timestamp: String(Math.floor(at / 1000)),
                      type: "text",
                      text: {
                        body: `message ${i}: ${crypto.randomUUID()} ${"lorem ipsum dolor sit amet ".repeat(1 + (i % 20))}`,
                      },
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
      const eventId = newEventId(cryptoRandom, at);
      const deliveryId = newDeliveryId(cryptoRandom, at);
      event.run(eventId, accountId, at, Buffer.from(body));
      delivery.run(deliveryId, accountId, endpointId, eventId, at, at);
      attempt.run(deliveryId, at + 12);
    }
  });
  let rows = 0;
  while (statSync(path).size + (Bun.file(`${path}-wal`).size ?? 0) < megabytes * 1024 * 1024) {
    batch(rows);
    rows += BATCH;
    sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  await store.close();
  return rows;
}
