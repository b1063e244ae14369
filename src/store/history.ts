import type { SignatureScheme } from "./endpoints.ts";
import type { DELIVERY_STATUSES, MESSAGE_EVENT_KINDS, PARKED_REASONS } from "./vocabulary.ts";
/** The webhook relay's delivery history: what was delivered, how each attempt went, and per-hour stats. */

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type ParkedReason = (typeof PARKED_REASONS)[number];

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
  /** The scheme its attempts are signed with (docs/webhooks.md#signature-schemes). */
  signature: SignatureScheme;
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

/** One message id an event mentions, as the index keeps it. */
export interface EventMessage {
  messageId: string;
  phoneNumberId: string | null;
  kind: (typeof MESSAGE_EVENT_KINDS)[number];
  status: string | null;
  errorCode: number | null;
}

/** An event that mentions a message, with the deliveries it made: one step of the message's timeline. */
export interface MessageEvent extends EventMessage {
  eventId: string;
  receivedAt: number;
  deliveries: Delivery[];
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

export interface HourlyStats {
  /** Start of the hour, epoch ms. */
  hour: number;
  succeeded: number;
  failed: number;
  parked: number;
}

/** Reads of what the delivery queue did (DeliveryQueue writes it all; the retention purge deletes it). */
export interface DeliveryHistory {
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
}
