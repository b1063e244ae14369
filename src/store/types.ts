import type {
  BILLING_STATUSES,
  KEY_MODES,
  NUMBER_KINDS,
  NUMBER_STATUSES,
  RETENTIONS,
  THROUGHPUT_LEVELS,
  WABA_STATUSES,
} from "./vocabulary.ts";

/** Domain records, as the rest of the service sees them (secrets already decrypted). */

export type BillingStatus = (typeof BILLING_STATUSES)[number];
export type Retention = (typeof RETENTIONS)[number];
export type KeyMode = (typeof KEY_MODES)[number];
export type WabaStatus = (typeof WABA_STATUSES)[number];
export type NumberKind = (typeof NUMBER_KINDS)[number];
export type NumberStatus = (typeof NUMBER_STATUSES)[number];
export type ThroughputLevel = (typeof THROUGHPUT_LEVELS)[number];

export interface Account {
  id: string;
  name: string;
  email: string;
  billingStatus: BillingStatus;
  retention: Retention;
  /** The plan's number allowance; null = no cap. */
  maxNumbers: number | null;
  createdAt: number;
}

export interface ApiKey {
  id: string;
  accountId: string;
  mode: KeyMode;
  name: string | null;
  prefix: string;
  keyHash: string;
  createdAt: number;
  revokedAt: number | null;
}

/**
 * Why a WABA or number left the connected state, as it happened (docs/proxy.md#upstream-errors-that-change-a-state):
 * the upstream error code and message that set it, when, and the request id (X-Proxy-Request-Id) of the proxied call
 * that got that answer, or null when no call did (a sync). All null while connected.
 */
export interface StatusCause {
  causeCode: number | null;
  causeMessage: string | null;
  causeAt: number | null;
  causeRequestId: string | null;
}

/** No cause: a connected WABA or number, or one whose state was set by hand. */
export const NO_CAUSE: StatusCause = Object.freeze({
  causeCode: null,
  causeMessage: null,
  causeAt: null,
  causeRequestId: null,
});

export interface Waba extends StatusCause {
  wabaId: string;
  accountId: string;
  accessToken: string;
  /** Only for bring-your-own apps; otherwise the service's APP_SECRET applies. */
  appSecret: string | null;
  status: WabaStatus;
  createdAt: number;
  updatedAt: number;
}

export interface PhoneNumber extends StatusCause {
  phoneNumberId: string;
  accountId: string;
  wabaId: string;
  kind: NumberKind;
  status: NumberStatus;
  throughputLevel: ThroughputLevel;
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  syncedAt: number | null;
  /** Why the last sync failed; null after a good one. */
  syncError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface User {
  id: string;
  accountId: string;
  email: string;
  passwordHash: string;
  createdAt: number;
  /** When a session of theirs was last opened; null until they first sign in. */
  lastSignInAt: number | null;
}

/** A user as created: not signed in yet. */
export type NewUser = Omit<User, "lastSignInAt">;

/** A new user's row: emails are stored in lower case, so that one address is one login. */
export const userRow = (user: NewUser): NewUser => ({ ...user, email: user.email.toLowerCase() });

export interface Session {
  tokenHash: string;
  userId: string;
  accountId: string;
  createdAt: number;
  expiresAt: number;
}

export interface Notification {
  id: string;
  accountId: string;
  kind: string;
  subject: string;
  body: string;
  emailedAt: number | null;
  createdAt: number;
}

export interface BucketState {
  key: string;
  tokens: number;
  updatedAt: number;
}
