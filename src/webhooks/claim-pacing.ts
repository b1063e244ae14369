/** docs/webhooks.md#at-least-once-and-in-no-fixed-order: up to 10 requests in flight to one endpoint. */
export const PER_ENDPOINT_IN_FLIGHT = 10;
/** Bounds sockets and memory whatever the number of endpoints. */
export const GLOBAL_IN_FLIGHT = 256;
/**
 * At most this many deliveries per claim, so that one claim's transaction stays short (its bodies
 * are bounded by MAX_BUFFERED_BYTES).
 */
export const CLAIM_BATCH = 64;
/** A lease outlasts an attempt's time-out by this much (see leaseMs). */
const LEASE_MARGIN_MS = 60_000;
/** How long a buffered delivery may wait for a slot: the lease margin, less some slack. */
const BUFFER_WAIT_MS = 50_000;

/** How long a lease lasts: longer than any attempt can take, so a live attempt never loses its lease. */
export const leaseMs = (webhookTimeoutMs: number): number => webhookTimeoutMs + LEASE_MARGIN_MS;

/**
 * How many deliveries an endpoint may have leased to this process, in flight or buffered. A sole
 * worker: the slots, plus as many rounds of them as can wait within BUFFER_WAIT_MS, since each
 * round ends within the time-out, so no buffered delivery's lease runs out before its attempt ends.
 * On a shared queue the store counts every instance's leases against the 10 in flight of
 * docs/webhooks.md#at-least-once-and-in-no-fixed-order, so a lease is a slot and nothing is buffered beyond them.
 */
export function leasedPerEndpoint(soleWorker: boolean, webhookTimeoutMs: number): number {
  if (!soleWorker) return PER_ENDPOINT_IN_FLIGHT;
  return PER_ENDPOINT_IN_FLIGHT * (1 + Math.floor(BUFFER_WAIT_MS / webhookTimeoutMs));
}

/**
 * The capacity an endpoint needs before its stored work is claimed after an attempt ends: a
 * round of slots, so that claims come in batches rather than one per released slot, while the
 * buffer still has a round left to start meanwhile; one, when the buffer holds no more than the
 * slots (long time-outs). On a shared queue, where nothing is buffered, half the slots: a claim
 * costs the database about as much as the attempts of the deliveries it takes record, so one per
 * released slot would double that, and the other half are still in flight meanwhile (new work,
 * and the tick each second, claim whatever the capacity).
 */
export function claimAtCapacity(soleWorker: boolean, leasedPerEndpoint: number): number {
  if (!soleWorker) return PER_ENDPOINT_IN_FLIGHT / 2;
  return Math.max(1, Math.min(PER_ENDPOINT_IN_FLIGHT, leasedPerEndpoint - PER_ENDPOINT_IN_FLIGHT));
}
