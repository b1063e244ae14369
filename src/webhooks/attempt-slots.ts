import type { SpanContext } from "@opentelemetry/api";
import type { ClaimedDelivery } from "../store/queue.ts";
import { runAttempt, type AttemptDeps } from "./attempt.ts";
import { GLOBAL_IN_FLIGHT, PER_ENDPOINT_IN_FLIGHT } from "./claim-pacing.ts";
import type { BufferedDelivery, EndpointBuffers } from "./endpoint-buffers.ts";

/** What the dispatcher tells the slots, and is told by them. */
export interface SlotsOwner {
  /** Whether the dispatcher has stopped: nothing more starts. */
  stopped(): boolean;
  /** Called once an attempt has ended and its slot, and any it freed, started their next deliveries. */
  attemptEnded(endpointId: string): void;
}

/**
 * Starts buffered deliveries' attempts, never more than GLOBAL_IN_FLIGHT at once nor
 * PER_ENDPOINT_IN_FLIGHT to one endpoint, and starts the next ones as attempts end.
 */
export class AttemptSlots {
  /** The attempts running. */
  readonly inFlight = new Set<Promise<void>>();
  /** Per endpoint, the slots this process holds: attempts in flight or about to start (see acquire). */
  private endpointInFlight = new Map<string, number>();
  /** Attempts ended so far (see Dispatcher.claim). */
  attemptsEnded = 0;

  constructor(
    private readonly deps: AttemptDeps,
    private readonly buffers: EndpointBuffers,
    private readonly owner: SlotsOwner,
  ) {}

  /** The slots this process holds for the endpoint. */
  of(endpointId: string): number {
    return this.endpointInFlight.get(endpointId) ?? 0;
  }

  /** The endpoints this process holds slots for. */
  endpointIds(): IterableIterator<string> {
    return this.endpointInFlight.keys();
  }

  /** Takes one of the endpoint's in-flight slots. */
  private acquire(endpointId: string): void {
    this.endpointInFlight.set(endpointId, (this.endpointInFlight.get(endpointId) ?? 0) + 1);
  }

  private release(endpointId: string): void {
    const n = (this.endpointInFlight.get(endpointId) ?? 1) - 1;
    if (n > 0) this.endpointInFlight.set(endpointId, n);
    else this.endpointInFlight.delete(endpointId);
  }

  /**
   * Runs one attempt in a slot of `endpointId` already acquired; `prepare` gives null when there is
   * nothing left to attempt.
   */
  private launch(
    endpointId: string,
    deliveryId: string,
    prepare: () => Promise<ClaimedDelivery | null>,
    origin?: SpanContext,
  ): void {
    const attempt: Promise<void> = prepare()
      .then((claimed) => (claimed ? runAttempt(this.deps, claimed, origin) : undefined))
      .catch((error) => this.deps.logger.error("delivery attempt crashed", { delivery_id: deliveryId, error }))
      .finally(() => {
        const globalSlotReleased = this.inFlight.size >= GLOBAL_IN_FLIGHT;
        this.attemptsEnded++;
        this.inFlight.delete(attempt);
        this.release(endpointId);
        this.startBuffered(endpointId);
        // Other endpoints' buffers wait on the global bound only while it is reached.
        if (globalSlotReleased) for (const id of this.buffers.endpointIds()) this.startBuffered(id);
        this.owner.attemptEnded(endpointId);
      });
    this.inFlight.add(attempt);
  }

  /** Starts the endpoint's buffered deliveries while it has free slots. */
  startBuffered(endpointId: string): void {
    let item = this.buffers.first(endpointId);
    while (
      item?.ready &&
      !this.owner.stopped() &&
      (this.endpointInFlight.get(endpointId) ?? 0) < PER_ENDPOINT_IN_FLIGHT &&
      this.inFlight.size < GLOBAL_IN_FLIGHT
    ) {
      const started = item;
      this.buffers.shift(endpointId);
      this.acquire(endpointId);
      this.launch(endpointId, started.claimed.delivery.id, () => this.claimedFromBuffer(started), started.origin);
      item = this.buffers.first(endpointId);
    }
  }

  /**
   * A buffered delivery as an attempt takes it. The endpoint is read when the attempt starts, so a
   * buffer never sends with a stale URL or secret; null when it was deleted meanwhile (its
   * deliveries went with it).
   */
  private async claimedFromBuffer({ claimed }: BufferedDelivery): Promise<ClaimedDelivery | null> {
    const endpoint = await this.deps.store.endpoints.forDelivery(claimed.delivery.endpointId);
    return endpoint ? { ...claimed, endpoint } : null;
  }
}
