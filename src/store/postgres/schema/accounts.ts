import { index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { BILLING_STATUSES, KEY_MODES, RETENTIONS } from "../../vocabulary.ts";
import { epochMs } from "./columns.ts";

export const accounts = pgTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull(),
  billingStatus: text("billing_status", { enum: BILLING_STATUSES }).notNull(),
  retention: text("retention", { enum: RETENTIONS }).notNull(),
  maxNumbers: integer("max_numbers"),
  createdAt: epochMs("created_at").notNull(),
});

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: epochMs("created_at").notNull(),
    /** When a session of theirs was last opened; null until they first sign in. */
    lastSignInAt: epochMs("last_sign_in_at"),
  },
  (t) => [uniqueIndex("users_email").on(t.email)],
);

export const sessions = pgTable(
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
    createdAt: epochMs("created_at").notNull(),
    expiresAt: epochMs("expires_at").notNull(),
  },
  // By user: a new password or a removed login ends every session of theirs.
  (t) => [index("sessions_expires").on(t.expiresAt), index("sessions_user").on(t.userId)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    mode: text("mode", { enum: KEY_MODES }).notNull(),
    name: text("name"),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    createdAt: epochMs("created_at").notNull(),
    revokedAt: epochMs("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash").on(t.keyHash), index("api_keys_account").on(t.accountId)],
);

/** The people who run the service (issue 29): they sign in to /operator; no account is theirs. */
export const operators = pgTable(
  "operators",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (t) => [uniqueIndex("operators_email").on(t.email)],
);

/** Operators' sessions: apart from account users' (sessions), so neither kind opens the other's pages. */
export const operatorSessions = pgTable(
  "operator_sessions",
  {
    // sha256 of the cookie value, as for sessions.
    tokenHash: text("token_hash").primaryKey(),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id, { onDelete: "cascade" }),
    createdAt: epochMs("created_at").notNull(),
    expiresAt: epochMs("expires_at").notNull(),
  },
  (t) => [index("operator_sessions_expires").on(t.expiresAt), index("operator_sessions_operator").on(t.operatorId)],
);

/**
 * Sign-in attempts counted before their password is checked (src/auth/throttle.ts), per email and
 * client address and per address, of both doors; `key` is a hash of what is counted, never an email.
 */
export const signInCounts = pgTable(
  "sign_in_counts",
  {
    key: text("key").primaryKey(),
    count: integer("count").notNull(),
    since: epochMs("since").notNull(),
  },
  (t) => [index("sign_in_counts_since").on(t.since)],
);
