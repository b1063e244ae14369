import { sql } from "drizzle-orm";
import { bigserial, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { MESSAGE_EVENT_KINDS, RECOVERY_STATUSES } from "../../vocabulary.ts";
import { accounts } from "./accounts.ts";
import { epochMs } from "./columns.ts";
import { deliveries, endpoints, events } from "./queue.ts";

export const attempts = pgTable(
  "attempts",
  {
    id: bigserial("id", { mode: "number" }).notNull(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => deliveries.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    at: epochMs("at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    responseExcerpt: text("response_excerpt"),
    durationMs: integer("duration_ms").notNull(),
  },
  // Read by delivery; one index for that and for uniqueness, so that recording an attempt writes one.
  (t) => [primaryKey({ columns: [t.deliveryId, t.id] })],
);

/** An endpoint's hourly chart, kept up by the commits that record attempts (see SQLite's). */
export const endpointHours = pgTable(
  "endpoint_hours",
  {
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    hour: epochMs("hour").notNull(),
    succeeded: integer("succeeded").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    parked: integer("parked").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.hour] })],
);

export const notifications = pgTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    emailedAt: epochMs("emailed_at"),
    createdAt: epochMs("created_at").notNull(),
  },
  (t) => [index("notifications_account").on(t.accountId, t.createdAt)],
);

/** The message ids each stored event mentions (a message's timeline); they go with their event. */
export const eventMessages = pgTable(
  "event_messages",
  {
    seq: bigserial("seq", { mode: "number" }).notNull(),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    messageId: text("message_id").notNull(),
    phoneNumberId: text("phone_number_id"),
    kind: text("kind", { enum: MESSAGE_EVENT_KINDS }).notNull(),
    status: text("status"),
    errorCode: integer("error_code"),
    receivedAt: epochMs("received_at").notNull(),
  },
  // Read by event or by message: the key serves the first, so that indexing a mention writes two entries, not three.
  (t) => [primaryKey({ columns: [t.eventId, t.seq] }), index("event_messages_message").on(t.accountId, t.messageId)],
);

/** Bulk recovers of an endpoint's parked deliveries (src/store/recoveries.ts); one running per endpoint. */
export const recoveries = pgTable(
  "recoveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    since: epochMs("since").notNull(),
    until: epochMs("until").notNull(),
    status: text("status", { enum: RECOVERY_STATUSES }).notNull(),
    found: integer("found").notNull(),
    replayed: integer("replayed").notNull(),
    skippedExpired: integer("skipped_expired").notNull(),
    skippedReplayed: integer("skipped_replayed").notNull(),
    cursorAt: epochMs("cursor_at"),
    cursorId: text("cursor_id"),
    startedAt: epochMs("started_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("recoveries_running").on(t.endpointId).where(sql`${t.status} = 'running'`),
    index("recoveries_endpoint").on(t.endpointId, t.startedAt),
  ],
);
