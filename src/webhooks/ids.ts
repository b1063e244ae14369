import { timeOrderedId, type Random } from "../runtime/random.ts";

// Events and deliveries are written thousands of times a second: their ids lead with the time so
// that the tables' indexes on them grow at one end (see timeOrderedId).

export const newEventId = (random: Random, now: number) => timeOrderedId(random, "evt", now, 20);

/** Sent as webhook-id (docs/webhooks.md#the-request-and-its-signature). */
export const newDeliveryId = (random: Random, now: number) => timeOrderedId(random, "msg", now, 24);
