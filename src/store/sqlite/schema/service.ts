import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const rateBuckets = sqliteTable("rate_buckets", {
  key: text("key").primaryKey(),
  tokens: real("tokens").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull().default(sql`''`),
});

/**
 * The audit log (src/store/audit.ts): kept for AUDIT_RETENTION whatever happens to what it names,
 * so no foreign key. Read newest first, of all accounts (the operator) or of one (its Activity page).
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    at: integer("at").notNull(),
    actorKind: text("actor_kind").notNull(),
    actorId: text("actor_id").notNull(),
    actorEmail: text("actor_email"),
    action: text("action").notNull(),
    objectKind: text("object_kind").notNull(),
    objectId: text("object_id").notNull(),
    accountId: text("account_id"),
    ip: text("ip"),
    /** JSON: {field: [before, after]}. */
    changes: text("changes").notNull(),
  },
  (t) => [index("audit_log_at").on(t.at, t.id), index("audit_log_account").on(t.accountId, t.at, t.id)],
);

/**
 * Upstream events ingress accepted, per hour (the operator's overview): every one answered 200,
 * and those of them that went to no endpoint (no known WABA, or no endpoint takes their fields).
 */
export const eventHours = sqliteTable("event_hours", {
  hour: integer("hour").primaryKey(),
  received: integer("received").notNull(),
  unrouted: integer("unrouted").notNull(),
});
