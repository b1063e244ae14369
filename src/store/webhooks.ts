import type { Retention } from "./types.ts";

/** Records of the webhook relay (secrets already decrypted), and the storage it needs. */

export type DisabledReason = "consecutive_failures" | "gone";
export type DeliveryStatus = "pending" | "succeeded" | "parked";
export type ParkedReason = "attempts_exhausted" | "gone" | "endpoint_disabled" | "payload_missing";

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
}

/** One account's share of one upstream event: the exact body its endpoints receive. */
export interface NewEvent {
  id: string;
  accountId: string;
  receivedAt: number;
  body: Uint8Array;
  /** Upstream's X-Hub-Signature-256, only when `body` is byte-identical to what upstream signed. */
  upstreamSignature: string | null;
  fields: string[];
  isTest: boolean;
  /** The message ids its entries mention, indexed with it in the same transaction (a message's timeline). */
  messages?: EventMessage[];
}

/** One message id an event mentions, as the index keeps it. */
export interface EventMessage {
  messageId: string;
  phoneNumberId: string | null;
  kind: "status" | "inbound";
  status: string | null;
  errorCode: number | null;
}

/** An event that mentions a message, with the deliveries it made: one step of the message's timeline. */
export interface MessageEvent extends EventMessage {
  eventId: string;
  receivedAt: number;
  deliveries: Delivery[];
}

export interface NewDelivery {
  /** Sent as webhook-id on every attempt. */
  id: string;
  accountId: string;
  endpointId: string;
  eventId: string;
  nextAttemptAt: number;
  replayOf: string | null;
  createdAt: number;
  /**
   * When set, the delivery is stored already leased to the caller, exactly as claimDue would leave
   * it (the caller attempts it without claiming; after a crash it comes due again). Only a store
   * whose `soleWorker` is true is given leases here.
   */
  lease?: Lease;
}

/** A delivery's lease: held until `until`; completions are fenced on `id`, so a stale holder cannot overwrite a new one. */
export interface Lease {
  id: string;
  until: number;
}

export interface Delivery {
  id: string;
  accountId: string;
  endpointId: string;
  eventId: string;
  status: DeliveryStatus;
  attemptCount: number;
  /** When the next attempt is due (while an attempt is in flight: when its lease ends); null once succeeded or parked. */
  nextAttemptAt: number | null;
  replayOf: string | null;
  parkedReason: ParkedReason | null;
  /** False once the payload is gone (history payload deleted, or purged). */
  payloadAvailable: boolean;
  fields: string[];
  isTest: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface Attempt {
  number: number;
  at: number;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  durationMs: number;
}

/** What an attempt needs of its endpoint: no health counters, which change with every attempt. */
export type DeliveryEndpoint = Pick<
  Endpoint,
  "id" | "accountId" | "url" | "enabled" | "secret" | "previousSecret" | "previousSecretExpiresAt"
>;

/** A delivery leased to this process, with everything one attempt needs. */
export interface ClaimedDelivery {
  delivery: Delivery;
  /** The lease's id, which its completion must name. */
  leaseId: string;
  endpoint: DeliveryEndpoint;
  /** Null when the payload no longer exists. */
  body: Uint8Array | null;
  upstreamSignature: string | null;
}

/** Where a delivery goes after an attempt (or after finding its endpoint disabled). */
export type DeliveryNext =
  | { status: "pending"; nextAttemptAt: number }
  | { status: "succeeded" }
  | { status: "parked"; reason: ParkedReason };

/** How an attempt counts for its endpoint's health (SPEC 3.1). */
export type EndpointEffect = "none" | "success" | "failure" | "gone";

/**
 * An endpoint's last_success_at is kept to this precision by every backend: a success that would
 * change nothing else but move it by less is not written (at thousands of successes a second it
 * would rewrite the endpoint's row in every commit). The 24-hour quiet window of the disabling
 * rule is widened by as much, so that an endpoint is never disabled early.
 */
export const LAST_SUCCESS_RESOLUTION_MS = 1_000;

/** SPEC 3.1 thresholds, passed in as data. */
export interface FailureRules {
  warnAt: number;
  disableAt: number;
  /** Disabling also needs no success within this long. */
  quietMs: number;
}

/** What completing an attempt did to the endpoint, so the caller can send emails. */
export interface EndpointChange {
  consecutiveFailures: number;
  /** The warning threshold was reached by this attempt. */
  warned: boolean;
  /** The endpoint was disabled by this attempt, and why. */
  disabled: DisabledReason | null;
}

export interface DeliveryFilter {
  accountId: string;
  endpointId?: string;
  status?: DeliveryStatus;
  /** Keyset cursor: only deliveries created strictly before this (createdAt, id), newest first. */
  before?: { createdAt: number; id: string };
  limit: number;
  /** Narrower searches (issue 19): what the event is and what became of the delivery. */
  search?: DeliverySearch;
}

export interface DeliverySearch {
  /** One of the event's fields (`messages`, `account_update`…). */
  field?: string;
  /** A number the event's messages changes are about (`value.metadata.phone_number_id`). */
  phoneNumberId?: string;
  /** A message id the event mentions (a status of it, or the message received). */
  messageId?: string;
  /** Created at or after. */
  from?: number;
  /** Created before. */
  to?: number;
  /** The status code its last attempt got. */
  lastStatusCode?: number;
}

export interface ClaimOptions {
  /** The lease every delivery of this claim gets: the caller's fresh id. */
  leaseId: string;
  limit: number;
  perEndpoint: number;
  leaseMs: number;
  maxBytes: number;
}

export interface HourlyStats {
  /** Start of the hour, epoch ms. */
  hour: number;
  succeeded: number;
  failed: number;
  parked: number;
}

/**
 * Storage of the webhook relay: endpoints, the durable delivery queue and its history. Every
 * promise resolves only once the change is committed, so it outlives the process; enqueue's only
 * once it is also on disk, so it outlives a power cut (the others, lost to one, mean a lease or an
 * attempt made again, which at-least-once allows). A PostgreSQL implementation must keep the same
 * promises (use one transaction where one is named, and `FOR UPDATE SKIP LOCKED` to claim).
 */
export interface WebhookStore {
  /**
   * True when this process alone works the queue (SQLite: one server per file). It may then hold
   * more leases per endpoint than it has requests in flight, and lease deliveries as it enqueues
   * them. A shared queue's leases are requests in flight, counted across every instance.
   */
  readonly soleWorker: boolean;
  /**
   * Calls `listener` when another process queued work due now (a shared queue's notification);
   * returns the function that stops listening. A sole worker is never told: it queued it itself.
   */
  onNewWork(listener: () => void): () => void;

  createEndpoint(endpoint: Endpoint): Promise<Endpoint>;
  endpoint(id: string): Promise<Endpoint | undefined>;
  /** The account's endpoints, oldest first. */
  endpoints(accountId: string): Promise<Endpoint[]>;
  /**
   * The account's endpoints as ingress matches them (no secrets, so nothing to decrypt). Must
   * reflect every endpoint change made through this store at once; an implementation may keep
   * them in memory only while it is the sole writer of endpoints (SQLite's one process).
   */
  targets(accountId: string): EndpointTarget[];
  /**
   * The endpoint as a delivery attempt needs it, read for every delivery started. Like targets, it
   * must reflect every change made through this store (an update, a deletion, a disable by
   * completeAttempt) at once, and may be kept in memory while this store is the sole writer.
   */
  deliveryEndpoint(id: string): Promise<DeliveryEndpoint | undefined>;
  updateEndpoint(id: string, patch: EndpointPatch): Promise<Endpoint | undefined>;
  /** Deletes the endpoint with its deliveries and their attempts. */
  deleteEndpoint(id: string): Promise<boolean>;

  /**
   * Stores events and their deliveries in ONE transaction: when this resolves, all are on disk;
   * when it rejects, none was acknowledged (a commit that could not be flushed to disk rejects
   * too). Ingress answers 200 only after this.
   */
  enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void>;

  /**
   * Called once when the delivery worker starts: makes deliveries leased by an earlier run claimable
   * again at once. SQLite has one server process per file, so it releases every lease; a shared
   * backend must release only leases of holders known to be gone and otherwise wait for expiry.
   */
  recoverLeases(now: number): Promise<void>;

  /**
   * Leases up to `limit` pending deliveries due at `now`, endpoints with the oldest due work
   * first, never giving an endpoint more than `perEndpoint` live leases in total, and stopping
   * before the claimed bodies (each delivery's counted) pass `maxBytes`, though the first delivery
   * always goes. A lease lasts until `now + leaseMs` or until completeAttempt; meanwhile the
   * delivery's nextAttemptAt is the lease's end. A lease that ran out with no attempt recorded
   * (its holder died, or its attempt crashed) makes the delivery claimable again (at-least-once),
   * under a new lease id.
   */
  claimDue(now: number, options: ClaimOptions): Promise<ClaimedDelivery[]>;

  /**
   * Records the outcome of a leased delivery in ONE transaction: the attempt row (if an attempt
   * was made), the delivery's next state (lease released), the endpoint's health by `effect`
   * under `rules` (a success resets the failure count; a failure increments it, sets warnedAt
   * when it reaches warnAt, and disables with `consecutive_failures` at disableAt when no success
   * happened within quietMs; `gone` disables at once), and, when `deletePayload`, marks the
   * delivery's payload deleted and drops the event body once no pending delivery still needs it.
   * A delivery that no longer exists (deleted with its endpoint while its attempt ran), or whose
   * lease is no longer `leaseId` (it ran out and another holder claimed it), gets nothing recorded,
   * and the promise resolves with no change to any endpoint.
   */
  completeAttempt(input: {
    deliveryId: string;
    leaseId: string;
    endpointId: string;
    attempt: Attempt | null;
    next: DeliveryNext;
    effect: EndpointEffect;
    deletePayload: boolean;
    now: number;
    rules: FailureRules;
  }): Promise<EndpointChange>;

  delivery(id: string): Promise<Delivery | undefined>;
  attempts(deliveryId: string): Promise<Attempt[]>;
  /** Newest first. */
  deliveries(filter: DeliveryFilter): Promise<Delivery[]>;
  /**
   * The endpoint's parked deliveries created in [since, until] after `after` (createdAt, id),
   * oldest first, each with whether it has a replay already (a bulk recover replays nothing twice).
   */
  parkedSince(
    endpointId: string,
    since: number,
    until: number,
    after: { createdAt: number; id: string } | null,
    limit: number,
  ): Promise<{ delivery: Delivery; replayed: boolean }[]>;
  /** What these events mention (for a deliveries list that says what each event is). */
  mentionsOf(eventIds: string[]): Promise<Omit<MessageEvent, "deliveries">[]>;
  /** The account's events that mention `messageId`, oldest first, each with its deliveries. */
  messageEvents(accountId: string, messageId: string): Promise<MessageEvent[]>;
  /** The stored body of an event, or null when it was deleted. */
  eventBody(eventId: string): Promise<Uint8Array | null>;
  /** Per-hour counts of an endpoint's succeeded and failed attempts and of deliveries parked, from `since`. */
  hourlyStats(endpointId: string, since: number, now: number): Promise<HourlyStats[]>;
  /**
   * Pending deliveries, for a gauge. May count in steps between which other work runs, so a
   * delivery that changes state meanwhile may be counted twice or missed.
   */
  pendingCount(): Promise<number>;

  /**
   * Deletes deliveries (with attempts) older than their account's retention, then events older
   * than it that no remaining delivery refers to. Works in bounded batches; returns what it removed.
   */
  purgeExpired(now: number, retentionMs: Record<Retention, number>): Promise<{ deliveries: number; events: number }>;
}
