import { sql } from "drizzle-orm";
import { bigint, doublePrecision, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { USAGE_KINDS } from "../../vocabulary.ts";
import { epochMs } from "./columns.ts";

export const rateBuckets = pgTable("rate_buckets", {
  key: text("key").primaryKey(),
  tokens: doublePrecision("tokens").notNull(),
  updatedAt: epochMs("updated_at").notNull(),
});

/** The request log of proxied calls (src/store/requests.ts), newest first per account. */
export const requestLog = pgTable(
  "request_log",
  {
    /** The request id, which starts with the call's time: the key's index fills at its end. */
    id: text("id").primaryKey(),
    // No foreign key: its check on every row cost each batch a look-up (and a row lock) of the account.
    accountId: text("account_id").notNull(),
    at: epochMs("at").notNull(),
    apiKeyId: text("api_key_id").notNull(),
    method: text("method").notNull(),
    route: text("route"),
    phoneNumberId: text("phone_number_id"),
    wabaId: text("waba_id"),
    status: integer("status").notNull(),
    errorCode: integer("error_code"),
    upstreamStatus: integer("upstream_status"),
    upstreamErrorCode: integer("upstream_error_code"),
    upstreamErrorSubcode: integer("upstream_error_subcode"),
    upstreamMs: doublePrecision("upstream_ms"),
    requestBytes: bigint("request_bytes", { mode: "number" }),
    responseBytes: bigint("response_bytes", { mode: "number" }),
    messageId: text("message_id"),
  },
  (t) => [
    index("request_log_account").on(t.accountId, t.at, t.id),
    // Only sends have a message id.
    index("request_log_message").on(t.messageId).where(sql`${t.messageId} IS NOT NULL`),
  ],
);

/** Calls per hour per number (or WABA), by what happened: forwarded by row, errors by code. */
export const usageHours = pgTable(
  "usage_hours",
  {
    accountId: text("account_id").notNull(),
    targetId: text("target_id").notNull(),
    hour: epochMs("hour").notNull(),
    kind: text("kind", { enum: USAGE_KINDS }).notNull(),
    label: text("label").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.hour, t.targetId, t.kind, t.label] })],
);

/** The audit log, as in SQLite (src/store/audit.ts): no foreign key, it outlives what it names. */
export const auditLog = pgTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    at: epochMs("at").notNull(),
    actorKind: text("actor_kind").notNull(),
    actorId: text("actor_id").notNull(),
    actorEmail: text("actor_email"),
    action: text("action").notNull(),
    objectKind: text("object_kind").notNull(),
    objectId: text("object_id").notNull(),
    accountId: text("account_id"),
    ip: text("ip"),
    /** JSON text, not jsonb: `switchboard migrate` copies SQLite's text as it is. */
    changes: text("changes").notNull(),
  },
  (t) => [index("audit_log_at").on(t.at, t.id), index("audit_log_account").on(t.accountId, t.at, t.id)],
);

/** Upstream events ingress accepted per hour, as in SQLite; each instance adds its own counts. */
export const eventHours = pgTable("event_hours", {
  hour: epochMs("hour").primaryKey(),
  received: integer("received").notNull(),
  unrouted: integer("unrouted").notNull(),
});
