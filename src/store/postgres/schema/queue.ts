import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { DELIVERY_STATUSES, DISABLED_REASONS, PARKED_REASONS, SIGNATURE_SCHEMES } from "../../vocabulary.ts";
import { accounts } from "./accounts.ts";
import { bytea, epochMs } from "./columns.ts";

export const endpoints = pgTable(
  "endpoints",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    fields: text("fields").array().notNull(),
    phoneNumberId: text("phone_number_id"),
    secretEnc: text("secret_enc").notNull(),
    previousSecretEnc: text("previous_secret_enc"),
    previousSecretExpiresAt: epochMs("previous_secret_expires_at"),
    signature: text("signature", { enum: SIGNATURE_SCHEMES }).notNull().default("standard"),
    // What Verify sends as hub.verify_token; set by the account, sealed like the secrets.
    verifyTokenEnc: text("verify_token_enc"),
    enabled: boolean("enabled").notNull(),
    disabledReason: text("disabled_reason", { enum: DISABLED_REASONS }),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    lastSuccessAt: epochMs("last_success_at"),
    warnedAt: epochMs("warned_at"),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [index("endpoints_account").on(t.accountId)],
);

// One row per account per upstream event: the body that account's endpoints receive.
export const events = pgTable("events", {
  id: text("id").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  receivedAt: epochMs("received_at").notNull(),
  // Null once the payload is deleted (history payloads, retention).
  body: bytea("body"),
  upstreamSignature: text("upstream_signature"),
  fields: text("fields").array().notNull(),
  isTest: boolean("is_test").notNull().default(false),
});

export const deliveries = pgTable(
  "deliveries",
  {
    // Sent as webhook-id; identical on every retry.
    id: text("id").primaryKey(),
    // No key to accounts: its endpoint's and its event's go with the account (cascades), and a
    // key of its own made every enqueued delivery lock the account's row once more.
    accountId: text("account_id").notNull(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    // When it is due. A claim leaves it as it is: a lease lives in endpoint_slots, and the
    // delivery is due again as soon as its lease ends without an attempt recorded.
    nextAttemptAt: epochMs("next_attempt_at"),
    replayOf: text("replay_of"),
    parkedReason: text("parked_reason", {
      enum: PARKED_REASONS,
    }),
    payloadDeleted: boolean("payload_deleted").notNull().default(false),
    // The scheme its attempts are signed with, fixed when it is created (its body's shape is too).
    signature: text("signature", { enum: SIGNATURE_SCHEMES }).notNull().default("standard"),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [
    // No index holds status or next_attempt_at: a completion changes only columns no index holds,
    // so that it rewrites the row in place (HOT) and writes no index entry. Due work is read from
    // due_deliveries.
    // Dropping a history payload, purging events, and the foreign keys' cascades.
    index("deliveries_event").on(t.eventId),
    // The dashboard's lists (newest first, per endpoint), the retention purge, and the cascade.
    index("deliveries_endpoint_created").on(t.endpointId, t.createdAt, t.id),
    // The lists of parked deliveries: a parked one, and only it, has a reason (see above for why
    // not status).
    index("deliveries_parked").on(t.endpointId, t.createdAt, t.id).where(sql`${t.parkedReason} IS NOT NULL`),
    // A delivery's replays: a bulk recover replays nothing twice.
    index("deliveries_replay_of").on(t.replayOf).where(sql`${t.replayOf} IS NOT NULL`),
  ],
);

/**
 * The deliveries still to be made (status pending), one row each: written when one is enqueued,
 * its due time moved by a retry, deleted when it succeeds or parks. A claim reads an endpoint's
 * due work here, from a table as small as the backlog, rather than from an index of `deliveries`
 * whose every completion would write the row anew with all its index entries. No foreign key:
 * its checks would cost each enqueue; the deletions of deliveries delete their rows here too
 * (see PgDeletions), and a claim reads only the rows of endpoints that exist.
 */
export const dueDeliveries = pgTable(
  "due_deliveries",
  {
    deliveryId: text("delivery_id").primaryKey(),
    endpointId: text("endpoint_id").notNull(),
    // Its event's, so that a claim weighs the body without reading the delivery first.
    eventId: text("event_id").notNull(),
    dueAt: epochMs("due_at").notNull(),
  },
  // An endpoint's oldest due work, in the claim's order (the id breaks ties, so that a claim
  // reads its few rows in index order rather than sorting the backlog).
  (t) => [index("due_deliveries_claim").on(t.endpointId, t.dueAt, t.deliveryId)],
);

/**
 * An endpoint's slots (docs/webhooks.md#at-least-once-and-in-no-fixed-order): one row per request it may have in flight across every instance,
 * made by the first claim that needs it. A claim leases a delivery by writing it into a free slot
 * (never used, released, or whose lease ran out); its completion, fenced on the lease id, frees
 * it. No column a lease changes is indexed, so every lease and release is a HOT update of a small
 * table, and the delivery's own row (and its indexes) is written only when it changes state.
 */
export const endpointSlots = pgTable(
  "endpoint_slots",
  {
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    slot: integer("slot").notNull(),
    deliveryId: text("delivery_id"),
    // The claim that holds (or last held) the slot: an attempt's record is kept only under it.
    leaseId: text("lease_id"),
    // The instance that made that claim (instances.id): its leases are taken back when it dies.
    holder: text("holder"),
    // The lease is live while this is in the future.
    leaseUntil: epochMs("lease_until"),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.slot] })],
);

/**
 * Where an endpoint's claims read its due deliveries from. Their older entries in
 * due_deliveries_claim point to rows since deleted or moved (the deliveries attempted, thousands a
 * second), until vacuum removes them: a claim that read from the start would step over all of
 * them. A claim reads from a second before the due time of the last one taken (what a commit that
 * came late brought in behind it), and from the start once a second, or when leases were taken back
 * (scanned_at null), to find the rest that came due behind (a retry, a lease run out).
 */
export const endpointDue = pgTable("endpoint_due", {
  endpointId: text("endpoint_id")
    .primaryKey()
    .references(() => endpoints.id, { onDelete: "cascade" }),
  lastTakenAt: epochMs("last_taken_at"),
  scannedAt: epochMs("scanned_at"),
});

/**
 * The instances working the queue (src/store/instances.ts): each beats once a second; one whose
 * count stops moving is taken for dead by the others, which free its slots at once.
 */
export const instances = pgTable("instances", {
  id: text("id").primaryKey(),
  // Random per process: another one under the same id shows as a change of it.
  incarnation: text("incarnation").notNull(),
  startedAt: epochMs("started_at").notNull(),
  beatAt: epochMs("beat_at").notNull(),
  beats: bigint("beats", { mode: "number" }).notNull(),
});

/**
 * One row: the number of the last change to what instances keep in memory (the directory,
 * endpoints). Each such change bumps it in its own transaction and sends it with pg_notify, so
 * an instance that sees a gap, or a number ahead of its own, knows it missed one (changes.ts).
 */
export const changes = pgTable("changes", {
  id: integer("id").primaryKey().default(1),
  seq: bigint("seq", { mode: "number" }).notNull().default(0),
});
