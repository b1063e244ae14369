import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { BILLING_STATUSES, KEY_MODES, RETENTIONS } from "../../vocabulary.ts";

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull(),
  billingStatus: text("billing_status", { enum: BILLING_STATUSES }).notNull(),
  retention: text("retention", { enum: RETENTIONS }).notNull(),
  maxNumbers: integer("max_numbers"),
  createdAt: integer("created_at").notNull(),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    /** When a session of theirs was last opened; null until they first sign in. */
    lastSignInAt: integer("last_sign_in_at"),
  },
  (t) => [uniqueIndex("users_email").on(t.email)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    // sha256 of the cookie value: a stolen database does not yield live sessions.
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  // By user: a new password or a removed login ends every session of theirs.
  (t) => [index("sessions_expires").on(t.expiresAt), index("sessions_user").on(t.userId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    mode: text("mode", { enum: KEY_MODES }).notNull(),
    name: text("name"),
    // First characters of the key, enough to recognise it in a list; the rest exists only as a hash.
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash").on(t.keyHash), index("api_keys_account").on(t.accountId)],
);

/** The people who run the service (issue 29): they sign in to /operator; no account is theirs. */
export const operators = sqliteTable(
  "operators",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("operators_email").on(t.email)],
);

/** Operators' sessions: apart from account users' (sessions), so neither kind opens the other's pages. */
export const operatorSessions = sqliteTable(
  "operator_sessions",
  {
    // sha256 of the cookie value, as for sessions.
    tokenHash: text("token_hash").primaryKey(),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("operator_sessions_expires").on(t.expiresAt), index("operator_sessions_operator").on(t.operatorId)],
);

/**
 * Sign-in attempts counted before their password is checked (src/auth/throttle.ts), per email and
 * client address and per address, of both doors; `key` is a hash of what is counted, never an email.
 */
export const signInCounts = sqliteTable(
  "sign_in_counts",
  {
    key: text("key").primaryKey(),
    count: integer("count").notNull(),
    since: integer("since").notNull(),
  },
  (t) => [index("sign_in_counts_since").on(t.since)],
);
