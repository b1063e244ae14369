import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
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
  USAGE_KINDS,
  WABA_STATUSES,
} from "../vocabulary.ts";

// The tables of src/store/sqlite/schema.ts, for the scale-out mode. Times are Unix epoch
// milliseconds from the injected clock (bigint read as a JS number), never SQL's own now().
// Field lists are text[] rather than jsonb: Bun's client stores a JSON text bound to a jsonb
// parameter as a JSON string (bench/RESULTS.md, "PostgreSQL driver").

const epochMs = (name: string) => bigint(name, { mode: "number" });

/** Event bodies: raw bytes, never re-encoded. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
});

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
  (t) => [index("sessions_expires").on(t.expiresAt)],
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

export const wabas = pgTable(
  "wabas",
  {
    wabaId: text("waba_id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    accessTokenEnc: text("access_token_enc").notNull(),
    appSecretEnc: text("app_secret_enc"),
    status: text("status", { enum: WABA_STATUSES }).notNull(),
    createdAt: epochMs("created_at").notNull(),
    causeCode: integer("cause_code"),
    causeMessage: text("cause_message"),
    causeAt: epochMs("cause_at"),
    causeRequestId: text("cause_request_id"),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [index("wabas_account").on(t.accountId)],
);

export const numbers = pgTable(
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
    syncedAt: epochMs("synced_at"),
    syncError: text("sync_error"),
    createdAt: epochMs("created_at").notNull(),
    causeCode: integer("cause_code"),
    causeMessage: text("cause_message"),
    causeAt: epochMs("cause_at"),
    causeRequestId: text("cause_request_id"),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [index("numbers_account").on(t.accountId), index("numbers_waba").on(t.wabaId)],
);

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
    // When it is due. A claim leaves it as it is: a lease lives in endpoint_slots, and the
    // delivery is due again as soon as its lease ends without an attempt recorded.
    nextAttemptAt: epochMs("next_attempt_at"),
    replayOf: text("replay_of"),
    parkedReason: text("parked_reason", {
      enum: PARKED_REASONS,
    }),
    payloadDeleted: boolean("payload_deleted").notNull().default(false),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [
    // An endpoint's oldest pending work (the claim; the few in flight are skipped by id). The id
    // breaks ties in the claim's order, so a claim reads its few rows in index order: without it,
    // every claim sorted the endpoint's whole backlog (27 ms for 6,400 due, bench/RESULTS.md).
    index("deliveries_due").on(t.endpointId, t.nextAttemptAt, t.id).where(sql`${t.status} = 'pending'`),
    // Dropping a history payload, purging events, and the foreign keys' cascades.
    index("deliveries_event").on(t.eventId),
    // The dashboard's lists (newest first, per endpoint), the retention purge, and the cascade.
    index("deliveries_endpoint_created").on(t.endpointId, t.createdAt, t.id),
    // The lists filtered by status, for the statuses most deliveries never keep long.
    index("deliveries_parked").on(t.endpointId, t.createdAt, t.id).where(sql`${t.status} = 'parked'`),
    // A delivery's replays: a bulk recover replays nothing twice.
    index("deliveries_replay_of").on(t.replayOf).where(sql`${t.replayOf} IS NOT NULL`),
    index("deliveries_pending").on(t.endpointId, t.createdAt, t.id).where(sql`${t.status} = 'pending'`),
  ],
);

/**
 * An endpoint's slots (docs/webhooks.md#at-least-once-and-in-no-fixed-order): one row per request it may have in flight across every instance,
 * made by the first claim that needs it. A claim leases a delivery by writing it into a free slot
 * (never used, released, or whose lease ran out); its completion, fenced on the lease id, frees
 * it. No column a lease changes is indexed, so every lease and release is a HOT update of a small
 * table, and the delivery's own row (and its five indexes) is written only when it changes state.
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
 * Where an endpoint's claims read its due deliveries from. Their older entries in deliveries_due
 * point to versions of rows that have since changed (the deliveries attempted, thousands a
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

export const rateBuckets = pgTable("rate_buckets", {
  key: text("key").primaryKey(),
  tokens: doublePrecision("tokens").notNull(),
  updatedAt: epochMs("updated_at").notNull(),
});

export const signInFailures = pgTable("sign_in_failures", {
  email: text("email").primaryKey(),
  count: integer("count").notNull(),
  lastAt: epochMs("last_at").notNull(),
});

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

/** Failed operator sign-ins per email, counted apart from account users' (an email may be both). */
export const operatorSignInFailures = pgTable("operator_sign_in_failures", {
  email: text("email").primaryKey(),
  count: integer("count").notNull(),
  lastAt: epochMs("last_at").notNull(),
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

/** Numbers' onboardings through Embedded Signup and their coexistence syncs (src/store/onboardings.ts); one per number. */
export const onboardings = pgTable(
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
    finishedAt: epochMs("finished_at"),
    leaseUntil: epochMs("lease_until"),
    /** When a run not finished stops holding its number and its secrets are dropped; null: none pending. */
    expiresAt: epochMs("expires_at"),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("onboardings_number").on(t.phoneNumberId),
    index("onboardings_account").on(t.accountId),
    index("onboardings_expires").on(t.expiresAt).where(sql`${t.expiresAt} IS NOT NULL`),
  ],
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
