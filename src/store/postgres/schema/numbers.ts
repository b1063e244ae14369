import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { NUMBER_KINDS, NUMBER_STATUSES, ONBOARDING_KINDS, THROUGHPUT_LEVELS, WABA_STATUSES } from "../../vocabulary.ts";
import { accounts } from "./accounts.ts";
import { epochMs } from "./columns.ts";

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
