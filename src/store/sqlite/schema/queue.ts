import { sql } from "drizzle-orm";
import { blob, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { DELIVERY_STATUSES, DISABLED_REASONS, PARKED_REASONS, SIGNATURE_SCHEMES } from "../../vocabulary.ts";
import { accounts } from "./accounts.ts";

export const endpoints = sqliteTable(
  "endpoints",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    fields: text("fields", { mode: "json" }).$type<string[]>().notNull(),
    phoneNumberId: text("phone_number_id"),
    secretEnc: text("secret_enc").notNull(),
    // Kept for the 24-hour overlap after a rotation, then ignored.
    previousSecretEnc: text("previous_secret_enc"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    signature: text("signature", { enum: SIGNATURE_SCHEMES }).notNull().default("standard"),
    // What Verify sends as hub.verify_token; set by the account, sealed like the secrets.
    verifyTokenEnc: text("verify_token_enc"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    disabledReason: text("disabled_reason", { enum: DISABLED_REASONS }),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    lastSuccessAt: integer("last_success_at"),
    warnedAt: integer("warned_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("endpoints_account").on(t.accountId)],
);

// One row per account per upstream event: the body that account's endpoints receive.
export const events = sqliteTable("events", {
  id: text("id").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  receivedAt: integer("received_at").notNull(),
  // Null once the payload is deleted (history payloads, retention).
  body: blob("body", { mode: "buffer" }),
  // The upstream X-Hub-Signature-256, kept only while the body is byte-identical to what upstream signed.
  upstreamSignature: text("upstream_signature"),
  fields: text("fields", { mode: "json" }).$type<string[]>().notNull(),
  isTest: integer("is_test", { mode: "boolean" }).notNull().default(false),
});
// No index but the primary key: an event is found through its deliveries, and deleted with the
// last of them (retention purge, endpoint deletion). An index per account would be written in
// one more place per account at every commit of the queue.

export const deliveries = sqliteTable(
  "deliveries",
  {
    // Sent as webhook-id; identical on every retry.
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at"),
    // A claim that expires: a delivery claimed by a process that died is attempted again.
    leaseUntil: integer("lease_until"),
    // The claim that holds (or last held) the lease: an attempt's record is kept only under it.
    leaseId: text("lease_id"),
    replayOf: text("replay_of"),
    parkedReason: text("parked_reason", {
      enum: PARKED_REASONS,
    }),
    // Set when this delivery's `history` payload was deleted on success or park: its replay is 410.
    payloadDeleted: integer("payload_deleted", { mode: "boolean" }).notNull().default(false),
    // The scheme its attempts are signed with, fixed when it is created (its body's shape is too).
    signature: text("signature", { enum: SIGNATURE_SCHEMES }).notNull().default("standard"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // Every index is written by the queue's commits, so there are only as many as the queries need.
    // The two queue indexes are partial, so the backlog and live leases are all they hold.
    // The claim's look-up of an endpoint's oldest due work. Leased deliveries are not in it: most are
    // stored leased (ingress starts them at once) and succeed, so the commits that store and end them
    // write no page of it.
    index("deliveries_due")
      .on(t.endpointId, t.nextAttemptAt)
      .where(sql`${t.status} = 'pending' AND ${t.leaseUntil} IS NULL`),
    // Live leases: counting them per endpoint, finding those that ran out, the pending count.
    index("deliveries_lease").on(t.leaseUntil).where(sql`${t.leaseUntil} IS NOT NULL`),
    // Dropping a history payload, purging events, and the foreign keys' cascades.
    index("deliveries_event").on(t.eventId),
    // The dashboard's lists (newest first), the retention purge, and the endpoint's cascade. None by
    // account: an account's list merges its endpoints' (SqliteHistory.deliveries), since each index
    // adds a page per account to every commit of the queue. Accounts are never deleted.
    index("deliveries_endpoint_created").on(t.endpointId, t.createdAt),
    // The lists filtered by status, newest first, for the two statuses most deliveries never have:
    // through the index above they read every delivery of the endpoint to find a page of them.
    // Neither is written while a delivery goes from ingress to success on its first attempt. Pending
    // deliveries that are leased are not in the second; the list reads them from deliveries_lease.
    index("deliveries_parked").on(t.endpointId, t.createdAt).where(sql`${t.status} = 'parked'`),
    // A delivery's replays: a bulk recover replays nothing twice.
    index("deliveries_replay_of").on(t.replayOf).where(sql`${t.replayOf} IS NOT NULL`),
    index("deliveries_waiting")
      .on(t.endpointId, t.createdAt)
      .where(sql`${t.status} = 'pending' AND ${t.leaseUntil} IS NULL`),
  ],
);
