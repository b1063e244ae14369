import { sql } from "drizzle-orm";
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  BILLING_STATUSES,
  DELIVERY_STATUSES,
  DISABLED_REASONS,
  KEY_MODES,
  MESSAGE_EVENT_KINDS,
  NUMBER_KINDS,
  NUMBER_STATUSES,
  ONBOARDING_KINDS,
  PARKED_REASONS,
  RECOVERY_STATUSES,
  RETENTIONS,
  THROUGHPUT_LEVELS,
  WABA_STATUSES,
} from "../vocabulary.ts";

// Times are Unix epoch milliseconds from the injected clock, never SQL's own now().

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
  (t) => [index("sessions_expires").on(t.expiresAt)],
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

export const wabas = sqliteTable(
  "wabas",
  {
    wabaId: text("waba_id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    accessTokenEnc: text("access_token_enc").notNull(),
    appSecretEnc: text("app_secret_enc"),
    status: text("status", { enum: WABA_STATUSES }).notNull(),
    createdAt: integer("created_at").notNull(),
    causeCode: integer("cause_code"),
    causeMessage: text("cause_message"),
    causeAt: integer("cause_at"),
    causeRequestId: text("cause_request_id"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("wabas_account").on(t.accountId)],
);

export const numbers = sqliteTable(
  "numbers",
  {
    phoneNumberId: text("phone_number_id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    wabaId: text("waba_id")
      .notNull()
      .references(() => wabas.wabaId, { onDelete: "cascade" }),
    kind: text("kind", { enum: NUMBER_KINDS }).notNull(),
    status: text("status", {
      enum: NUMBER_STATUSES,
    }).notNull(),
    throughputLevel: text("throughput_level", { enum: THROUGHPUT_LEVELS }).notNull(),
    displayPhoneNumber: text("display_phone_number"),
    verifiedName: text("verified_name"),
    syncedAt: integer("synced_at"),
    syncError: text("sync_error"),
    createdAt: integer("created_at").notNull(),
    causeCode: integer("cause_code"),
    causeMessage: text("cause_message"),
    causeAt: integer("cause_at"),
    causeRequestId: text("cause_request_id"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("numbers_account").on(t.accountId), index("numbers_waba").on(t.wabaId)],
);

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

export const rateBuckets = sqliteTable("rate_buckets", {
  key: text("key").primaryKey(),
  tokens: real("tokens").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export const signInFailures = sqliteTable("sign_in_failures", {
  email: text("email").primaryKey(),
  count: integer("count").notNull(),
  lastAt: integer("last_at").notNull(),
});

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

/** Failed operator sign-ins per email, counted apart from account users' (an email may be both). */
export const operatorSignInFailures = sqliteTable("operator_sign_in_failures", {
  email: text("email").primaryKey(),
  count: integer("count").notNull(),
  lastAt: integer("last_at").notNull(),
});

export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull().default(sql`''`),
});

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

/** Numbers' onboardings through Embedded Signup and their coexistence syncs (src/store/onboardings.ts); one per number. */
export const onboardings = sqliteTable(
  "onboardings",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    phoneNumberId: text("phone_number_id").notNull(),
    wabaId: text("waba_id").notNull(),
    kind: text("kind", { enum: ONBOARDING_KINDS }).notNull(),
    codeEnc: text("code_enc"),
    /** SHA-256 of the last code, kept once the code is spent or dropped: the same code sent twice is a repeat. */
    codeHash: text("code_hash"),
    accessTokenEnc: text("access_token_enc"),
    pinEnc: text("pin_enc"),
    steps: text("steps").notNull(),
    preflights: text("preflights").notNull(),
    syncs: text("syncs").notNull(),
    finishedAt: integer("finished_at"),
    leaseUntil: integer("lease_until"),
    /** When a run not finished stops holding its number and its secrets are dropped; null: none pending. */
    expiresAt: integer("expires_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("onboardings_number").on(t.phoneNumberId),
    index("onboardings_account").on(t.accountId),
    index("onboardings_expires").on(t.expiresAt).where(sql`${t.expiresAt} IS NOT NULL`),
  ],
);

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
