import type { Random } from "../runtime/random.ts";
import type { EndpointTarget } from "../store/endpoints.ts";
import type { NewDelivery, NewEvent } from "../store/queue.ts";
import type { EventChange, EventEntry, UpstreamEvent } from "./event.ts";
import { newDeliveryId, newEventId } from "./ids.ts";
import { oneChangeBodies } from "./platform-body.ts";

/** One account's share of an event: what ingress, Send test and a replay hand to fanOut. */
export interface Share {
  accountId: string;
  at: number;
  /** The parsed event whose bytes hold `entries`. */
  event: UpstreamEvent;
  entries: EventEntry[];
  /** What `standard` endpoints receive: the whole share. */
  body: Uint8Array;
  /** Upstream's X-Hub-Signature-256, when `body` is byte-identical to what upstream signed. */
  upstreamSignature: string | null;
  isTest: boolean;
}

/** Whether a change goes to an endpoint. */
export type Match = (target: EndpointTarget, change: EventChange) => boolean;

const mentionsOf = (changes: EventChange[]) =>
  changes.flatMap((c) => c.messages.map((m) => ({ ...m, phoneNumberId: c.phoneNumberId })));

/**
 * The events and deliveries of one share (docs/webhooks.md#signature-schemes): `standard`
 * endpoints with a matching change get the share's body, one event for all of them; each change
 * that matches `platform` endpoints becomes its own one-change event (its bytes copied, see
 * platform-body.ts), one delivery per change to each of them. Every delivery is due at `at`.
 */
export function fanOut(
  random: Random,
  share: Share,
  targets: EndpointTarget[],
  match: Match,
): { events: NewEvent[]; deliveries: NewDelivery[] } {
  const { accountId, at } = share;
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  const deliver = (endpointId: string, eventId: string, signature: EndpointTarget["signature"]) =>
    deliveries.push({
      id: newDeliveryId(random, at),
      accountId,
      endpointId,
      eventId,
      nextAttemptAt: at,
      replayOf: null,
      signature,
      createdAt: at,
    });

  const changes = share.entries.flatMap((e) => e.changes);
  const standard = targets.filter((t) => t.signature === "standard" && changes.some((c) => match(t, c)));
  if (standard.length > 0) {
    const eventId = newEventId(random, at);
    events.push({
      id: eventId,
      accountId,
      receivedAt: at,
      body: share.body,
      upstreamSignature: share.upstreamSignature,
      fields: [...new Set(changes.map((c) => c.field))],
      isTest: share.isTest,
      messages: mentionsOf(changes),
    });
    for (const t of standard) deliver(t.id, eventId, "standard");
  }

  const platform = targets.filter((t) => t.signature === "platform");
  if (platform.length === 0) return { events, deliveries };
  for (const entry of share.entries) {
    const wanted = entry.changes.map((c) => platform.filter((t) => match(t, c)));
    if (wanted.every((list) => list.length === 0)) continue;
    const bodies = oneChangeBodies(share.event, entry);
    entry.changes.forEach((change, i) => {
      const to = wanted[i] ?? [];
      const body = bodies[i];
      if (to.length === 0 || body === undefined) return;
      const eventId = newEventId(random, at);
      events.push({
        id: eventId,
        accountId,
        receivedAt: at,
        body,
        upstreamSignature: null,
        fields: [change.field],
        isTest: share.isTest,
        messages: mentionsOf([change]),
      });
      for (const t of to) deliver(t.id, eventId, "platform");
    });
  }
  return { events, deliveries };
}
