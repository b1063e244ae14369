import type { DisabledReason } from "./endpoints.ts";

/** An endpoint that is disabled, as the operator's overview lists it. */
export interface DisabledEndpoint {
  id: string;
  accountId: string;
  url: string;
  disabledReason: DisabledReason | null;
  /** Its last change: the disable, unless it was edited since. */
  updatedAt: number;
}

/** Upstream events ingress accepted (answered 200), and how many of them went to no endpoint. */
export interface EventCounts {
  received: number;
  unrouted: number;
}

/** One hour's event counts (the hour's start, in epoch ms). */
export interface EventHour extends EventCounts {
  hour: number;
}

/** Delivery work of every endpoint in the hours counted (the endpoints' hourly stats). */
export interface DeliveryTotals {
  succeeded: number;
  failed: number;
  parked: number;
}

/**
 * Counts across every account, for the operator console (issue 29). None is on a request's path of
 * the proxy or the relay; on SQLite each long count yields between chunks, as the queue's pending
 * count does, so the server keeps answering while the console reads.
 */
export interface OverviewStore {
  /** Adds to each hour's counts of upstream events accepted (each instance adds its own). */
  addEventCounts(counts: EventHour[]): Promise<void>;
  /** The upstream events accepted in the hours that start at or after each of `hours`, in one pass. */
  eventsSince(hours: number[]): Promise<EventCounts[]>;
  /** Attempts that succeeded or failed, and deliveries parked, in the hours that start at or after `since`. */
  deliveriesSince(since: number): Promise<DeliveryTotals>;
  /** Enabled endpoints whose last attempts failed (one failure or more since their last success). */
  failingEndpoints(): Promise<number>;
  /** Disabled endpoints last changed at or after `since`, newest first, at most `limit`. */
  disabledSince(since: number, limit: number): Promise<DisabledEndpoint[]>;
}
