import type { AuditEntry } from "./audit.ts";
import type { DeliveryEndpoint, DisabledReason, SignatureScheme } from "./endpoints.ts";
import type { Attempt, Delivery, EventMessage, ParkedReason } from "./history.ts";

/** The webhook relay's durable delivery queue: events in, deliveries leased, attempts recorded. */

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

export interface NewDelivery {
  /** Sent as webhook-id on every attempt. */
  id: string;
  accountId: string;
  endpointId: string;
  eventId: string;
  nextAttemptAt: number;
  replayOf: string | null;
  /** How it is signed; its event's body has the shape the scheme needs (see fan-out.ts). */
  signature: SignatureScheme;
  createdAt: number;
  /**
   * When set, the delivery is stored already leased to the caller, exactly as claimDue would leave
   * it (the caller attempts it without claiming; after a crash it comes due again). Only a queue
   * whose `soleWorker` is true is given leases here.
   */
  lease?: Lease;
  /** The change it records (a replay asked for by someone), written in the same transaction. */
  audit?: AuditEntry;
}

/** A delivery's lease: held until `until`; completions are fenced on `id`, so a stale holder cannot overwrite a new one. */
export interface Lease {
  id: string;
  until: number;
}

export interface ClaimOptions {
  /** The lease every delivery of this claim gets: the caller's fresh id. */
  leaseId: string;
  limit: number;
  perEndpoint: number;
  leaseMs: number;
  maxBytes: number;
}

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

/** How an attempt counts for its endpoint's health (docs/webhooks.md#endpoint-health-and-disabling). */
export type EndpointEffect = "none" | "success" | "failure" | "gone";

/**
 * An endpoint's last_success_at is kept to this precision by every backend: a success that would
 * change nothing else but move it by less is not written (at thousands of successes a second it
 * would rewrite the endpoint's row in every commit). The 24-hour quiet window of the disabling
 * rule is widened by as much, so that an endpoint is never disabled early.
 */
export const LAST_SUCCESS_RESOLUTION_MS = 1_000;

/** docs/webhooks.md#endpoint-health-and-disabling thresholds, passed in as data. */
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

/** The outcome of one leased delivery, as completeAttempt records it. */
export interface Completion {
  deliveryId: string;
  leaseId: string;
  endpointId: string;
  /** Null when no attempt was made (its endpoint was found disabled, or its payload gone). */
  attempt: Attempt | null;
  next: DeliveryNext;
  effect: EndpointEffect;
  deletePayload: boolean;
  now: number;
  rules: FailureRules;
}

/**
 * The durable delivery queue. Every promise resolves only once the change is committed, so it
 * outlives the process; enqueue's only once it is also on disk, so it outlives a power cut (the
 * others, lost to one, mean a lease or an attempt made again, which at-least-once allows). A
 * shared backend must keep the same promises (use one transaction where one is named, and never
 * let two claims lease one delivery), and its leases name the instance that holds them
 * (InstanceStore.self), so that the leases of an instance that died are taken back at once.
 */
export interface DeliveryQueue {
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

  /**
   * Stores events and their deliveries in ONE transaction: when this resolves, all are on disk;
   * when it rejects, none was acknowledged (a commit that could not be flushed to disk rejects
   * too). Ingress answers 200 only after this.
   */
  enqueue(events: NewEvent[], deliveries: NewDelivery[]): Promise<void>;

  /**
   * Called once when the delivery worker starts, before its first claim: makes deliveries leased by
   * an earlier run of this instance claimable again at once. SQLite has one server process per
   * file, so it releases every lease; a shared backend releases those its instance id holds (an
   * earlier run under the same id), and leaves other instances' to them (see InstanceStore).
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
   * happened within quietMs; `gone` disables at once, with the disable's audit entry,
   * automaticDisable), the endpoint's hourly stats, and, when
   * `deletePayload`, marks the delivery's payload deleted and drops the event body once no pending
   * delivery still needs it. A delivery that no longer exists (deleted with its endpoint while its
   * attempt ran), or whose lease is no longer `leaseId` (it ran out and another holder claimed
   * it), gets nothing recorded, and the promise resolves with no change to any endpoint.
   */
  completeAttempt(completion: Completion): Promise<EndpointChange>;

  /**
   * Pending deliveries, for a gauge. May count in steps between which other work runs, so a
   * delivery that changes state meanwhile may be counted twice or missed.
   */
  pendingCount(): Promise<number>;
}
