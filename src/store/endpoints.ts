import type { DISABLED_REASONS, SIGNATURE_SCHEMES } from "./vocabulary.ts";
import type { AuditEntry } from "./audit.ts";

/** Webhook endpoints (secrets already decrypted), and their storage. */

export type DisabledReason = (typeof DISABLED_REASONS)[number];
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export interface Endpoint {
  id: string;
  accountId: string;
  url: string;
  fields: string[];
  /** Only changes for this number are delivered; null = every number of the account. */
  phoneNumberId: string | null;
  secret: string;
  /** The secret before the last rotation; also signs until previousSecretExpiresAt. */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** How its deliveries are signed and shaped (docs/webhooks.md#signature-schemes). */
  signature: SignatureScheme;
  /** What Verify sends as hub.verify_token; null until the account sets one. */
  verifyToken: string | null;
  enabled: boolean;
  disabledReason: DisabledReason | null;
  consecutiveFailures: number;
  lastSuccessAt: number | null;
  /** When the 20-failure warning went out for the current run of failures. */
  warnedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type EndpointPatch = Partial<Omit<Endpoint, "id" | "accountId" | "createdAt" | "updatedAt">> & {
  updatedAt: number;
};

/** What ingress needs to match changes to an endpoint. */
export interface EndpointTarget {
  id: string;
  fields: string[];
  phoneNumberId: string | null;
  signature: SignatureScheme;
}

/** What an attempt needs of its endpoint: no health counters, which change with every attempt. */
export type DeliveryEndpoint = Pick<
  Endpoint,
  "id" | "accountId" | "url" | "enabled" | "secret" | "previousSecret" | "previousSecretExpiresAt"
>;

/**
 * Webhook endpoints. Their health counters are changed by the delivery queue, as it records
 * attempts (DeliveryQueue.completeAttempt); every change made through the store is visible to
 * the very next read, here as in the queue. Each change takes an optional audit entry, written in
 * its transaction when it changes the endpoint.
 */
export interface EndpointStore {
  create(endpoint: Endpoint, audit?: AuditEntry): Promise<Endpoint>;
  get(id: string): Promise<Endpoint | undefined>;
  /** The account's endpoints, oldest first. */
  ofAccount(accountId: string): Promise<Endpoint[]>;
  /**
   * The account's endpoints as ingress matches them (no secrets, so nothing to decrypt), oldest
   * first. Must reflect every endpoint change made through this store at once; an implementation
   * may keep them in memory only while it is the sole writer of endpoints (SQLite's one process).
   */
  targets(accountId: string): EndpointTarget[];
  /**
   * The endpoint as a delivery attempt needs it, read for every delivery started. Like targets, it
   * must reflect every change made through this store (an update, a deletion, a disable by
   * completeAttempt) at once, and may be kept in memory while this store is the sole writer.
   */
  forDelivery(id: string): Promise<DeliveryEndpoint | undefined>;
  update(id: string, patch: EndpointPatch, audit?: AuditEntry): Promise<Endpoint | undefined>;
  /**
   * Deletes the endpoint with its deliveries and their attempts, and the events no other delivery
   * needs. It stops sending to it first (one write, with the entry), then deletes in steps.
   */
  delete(id: string, audit?: AuditEntry): Promise<boolean>;
}
