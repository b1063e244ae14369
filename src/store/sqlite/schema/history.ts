import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { MESSAGE_EVENT_KINDS, RECOVERY_STATUSES } from "../../vocabulary.ts";
import { accounts } from "./accounts.ts";
import { deliveries, endpoints, events } from "./queue.ts";

export const attempts = sqliteTable(
  "attempts",
  {
    // A plain rowid: AUTOINCREMENT would also write sqlite_sequence on every attempt.
    id: integer("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => deliveries.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    at: integer("at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    responseExcerpt: text("response_excerpt"),
    durationMs: integer("duration_ms").notNull(),
  },
  (t) => [
    // A delivery's attempts, and its cascade.
    index("attempts_delivery").on(t.deliveryId),
  ],
);

/**
 * An endpoint's hourly chart (GET /api/endpoints/{id}/stats): attempts that succeeded or failed,
 * by the hour they started, and deliveries parked, by the hour they parked. Kept up in the commit
 * that records each attempt, so the chart reads a row per hour; counting them from the deliveries
 * read every delivery of the endpoint in retention on the server's thread (217-238 ms for 200,000,
 * bench/webhooks/stats.ts).
 * Purged with the account's retention, as the deliveries are.
 */
export const endpointHours = sqliteTable(
  "endpoint_hours",
  {
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    // Start of the hour, epoch ms.
    hour: integer("hour").notNull(),
    succeeded: integer("succeeded").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    parked: integer("parked").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.hour] })],
);

export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    emailedAt: integer("emailed_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("notifications_account").on(t.accountId, t.createdAt)],
);

/** The message ids each stored event mentions (a message's timeline); they go with their event. */
export const eventMessages = sqliteTable(
  "event_messages",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    messageId: text("message_id").notNull(),
    phoneNumberId: text("phone_number_id"),
    kind: text("kind", { enum: MESSAGE_EVENT_KINDS }).notNull(),
    status: text("status"),
    errorCode: integer("error_code"),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [index("event_messages_message").on(t.accountId, t.messageId), index("event_messages_event").on(t.eventId)],
);

/** Bulk recovers of an endpoint's parked deliveries (src/store/recoveries.ts); one running per endpoint. */
export const recoveries = sqliteTable(
  "recoveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    since: integer("since").notNull(),
    until: integer("until").notNull(),
    status: text("status", { enum: RECOVERY_STATUSES }).notNull(),
    found: integer("found").notNull(),
    replayed: integer("replayed").notNull(),
    skippedExpired: integer("skipped_expired").notNull(),
    skippedReplayed: integer("skipped_replayed").notNull(),
    cursorAt: integer("cursor_at"),
    cursorId: text("cursor_id"),
    startedAt: integer("started_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("recoveries_running").on(t.endpointId).where(sql`${t.status} = 'running'`),
    index("recoveries_endpoint").on(t.endpointId, t.startedAt),
  ],
);
