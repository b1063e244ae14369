import type { SpanContext } from "@opentelemetry/api";
import type { ClaimedDelivery, NewDelivery, NewEvent } from "../store/queue.ts";
import { GLOBAL_IN_FLIGHT } from "./claim-pacing.ts";

/** Bound the deliveries, and the body bytes, held in endpoints' buffers (see EndpointBuffers). */
export const MAX_BUFFERED = 4 * GLOBAL_IN_FLIGHT;
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/**
 * A delivery leased to this process (stored so by enqueue, or claimed from the store), waiting in
 * its endpoint's buffer for a slot. Its endpoint is read when it starts (see AttemptSlots.claimedFromBuffer).
 */
export interface BufferedDelivery {
  claimed: Omit<ClaimedDelivery, "endpoint">;
  /** Set on the turn after enqueue's commit (see Dispatcher.enqueue): only then may it start. */
  ready: boolean;
  /** The trace its event arrived in (see Dispatcher.enqueue). */
  origin?: SpanContext;
}

const bytesOf = (item: BufferedDelivery) => item.claimed.body?.length ?? 0;

/**
 * Per endpoint, deliveries leased to this process, oldest first, each waiting for one of the
 * endpoint's slots: fresh ones, which start without a claim, and those a claim took ahead of the
 * slots. A claim costs several times more than the attempt's own writes when it takes one
 * delivery at a time (bench/RESULTS.md): without the buffer, a hiccup of a few milliseconds sent
 * new deliveries to the store, each then needed a claim, and the queue stayed behind.
 */
export class EndpointBuffers {
  private buffers = new Map<string, BufferedDelivery[]>();
  /** Deliveries buffered, over every endpoint. */
  count = 0;
  /** Body bytes of the buffered deliveries (an event's body counted once per delivery of it). */
  bytes = 0;

  /** The endpoints that have a buffer. */
  endpointIds(): IterableIterator<string> {
    return this.buffers.keys();
  }

  lengthOf(endpointId: string): number {
    return this.buffers.get(endpointId)?.length ?? 0;
  }

  /** The endpoint's oldest buffered delivery. */
  first(endpointId: string): BufferedDelivery | undefined {
    return this.buffers.get(endpointId)?.[0];
  }

  /** Takes the endpoint's oldest buffered delivery out (see first); drops the buffer once empty. */
  shift(endpointId: string): void {
    const buffer = this.buffers.get(endpointId);
    const item = buffer?.shift();
    if (item) {
      this.count--;
      this.bytes -= bytesOf(item);
    }
    if (buffer?.length === 0) this.buffers.delete(endpointId);
  }

  /** Puts a leased delivery at the end of its endpoint's buffer. */
  add(endpointId: string, item: BufferedDelivery): void {
    const buffer = this.buffers.get(endpointId);
    if (buffer) buffer.push(item);
    else this.buffers.set(endpointId, [item]);
    this.count++;
    this.bytes += bytesOf(item);
  }

  /** Takes back deliveries whose commit failed. */
  remove(items: BufferedDelivery[]): void {
    const gone = new Set(items);
    for (const [id, buffer] of this.buffers) {
      const kept = buffer.filter((item) => !gone.has(item));
      this.count -= buffer.length - kept.length;
      for (const item of buffer) if (gone.has(item)) this.bytes -= bytesOf(item);
      if (kept.length > 0) this.buffers.set(id, kept);
      else this.buffers.delete(id);
    }
  }
}

/** A fresh delivery as enqueue stores it leased to this process, not ready until its commit. */
export function leasedOnEnqueue(
  d: NewDelivery,
  event: NewEvent,
  lease: { id: string; until: number },
  origin?: SpanContext,
): BufferedDelivery {
  return {
    claimed: {
      leaseId: lease.id,
      delivery: {
        id: d.id,
        accountId: d.accountId,
        endpointId: d.endpointId,
        eventId: d.eventId,
        status: "pending",
        attemptCount: 0,
        nextAttemptAt: lease.until,
        replayOf: d.replayOf,
        parkedReason: null,
        payloadAvailable: true,
        fields: event.fields,
        isTest: event.isTest,
        signature: d.signature,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
      },
      body: event.body,
      upstreamSignature: event.upstreamSignature,
    },
    ready: false,
    origin,
  };
}
