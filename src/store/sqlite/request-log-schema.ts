import { integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

// The request log's tables in its own file, as the reads see them (drizzle's query builder). The
// file's schema itself (keys, indexes, WITHOUT ROWID) is request-log-file.ts's, not drizzle-kit's.

/** The request log of proxied calls (src/store/requests.ts), newest first per account. */
export const requestLog = sqliteTable("request_log", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull(),
  at: integer("at").notNull(),
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
  upstreamMs: real("upstream_ms"),
  requestBytes: integer("request_bytes"),
  responseBytes: integer("response_bytes"),
  messageId: text("message_id"),
});

/** Calls per hour per number (or WABA), by what happened: forwarded by row, errors by code. */
export const usageHours = sqliteTable("usage_hours", {
  accountId: text("account_id").notNull(),
  targetId: text("target_id").notNull(),
  hour: integer("hour").notNull(),
  kind: text("kind", { enum: ["forwarded", "upstream_error", "refused"] }).notNull(),
  label: text("label").notNull(),
  count: integer("count").notNull(),
});
