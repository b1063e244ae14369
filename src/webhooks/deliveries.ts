import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { decodeCursor, encodeCursor } from "../http/cursor.ts";
import { timeParam } from "../http/time-param.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { writtenRow } from "../store/errors.ts";
import type { Attempt, Delivery, DeliverySearch, DeliveryStatus, HourlyStats } from "../store/history.ts";
import { HOUR } from "../store/hours.ts";
import { mustEndpoint, type QueueDeps } from "./endpoints.ts";
import type { Endpoint } from "../store/endpoints.ts";
import type { NewDelivery, NewEvent } from "../store/queue.ts";
import { parseEvent } from "./event.ts";
import { fanOut } from "./fan-out.ts";
import { newDeliveryId } from "./ids.ts";

type DeliveryDeps = Pick<Deps, "store" | "clock" | "random">;

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

async function mustDelivery(deps: DeliveryDeps, accountId: string, id: string): Promise<Delivery> {
  const delivery = await deps.store.history.delivery(id);
  if (!delivery || delivery.accountId !== accountId) throw new AppError("not_found", `No delivery ${id}.`);
  return delivery;
}

/** A page's cursor: the (createdAt, id) of its last delivery. */
const deliveryCursor = (d: Pick<Delivery, "createdAt" | "id">): string => encodeCursor(d.createdAt, d.id);

/** The search criteria of a deliveries query, or undefined when it has none (the fast path by endpoint and status). */
function searchOf(query: DeliveryQuery): DeliverySearch | undefined {
  const search: DeliverySearch = {
    field: query.field || undefined,
    phoneNumberId: query.number || undefined,
    messageId: query.message_id?.trim().replace(/^["']|["']$/g, "") || undefined,
    from: timeParam("from", query.from),
    to: timeParam("to", query.to),
    lastStatusCode: query.last_status === "" || query.last_status === undefined ? undefined : Number(query.last_status),
  };
  return Object.values(search).some((v) => v !== undefined) ? search : undefined;
}

export type DeliveryQuery = {
  endpoint_id?: string;
  status?: DeliveryStatus | "";
  cursor?: string;
  limit?: number;
  field?: string;
  number?: string;
  message_id?: string;
  from?: string;
  to?: string;
  last_status?: number | "";
};

export async function listDeliveries(
  deps: DeliveryDeps,
  accountId: string,
  query: DeliveryQuery,
): Promise<{ data: Delivery[]; nextCursor: string | null; about: Map<string, string> }> {
  // Empty means no filter, as an absent parameter does.
  const endpointId = query.endpoint_id || undefined;
  if (endpointId !== undefined) await mustEndpoint(deps, accountId, endpointId);
  const limit = Math.min(query.limit ?? DEFAULT_PAGE, MAX_PAGE);
  const rows = await deps.store.history.deliveries({
    accountId,
    endpointId,
    status: query.status || undefined,
    before: query.cursor ? (({ at, id }) => ({ createdAt: at, id }))(decodeCursor(query.cursor)) : undefined,
    limit: limit + 1,
    search: searchOf(query),
  });
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return {
    data,
    nextCursor: rows.length > limit && last ? deliveryCursor(last) : null,
    about: await describeEvents(deps, data),
  };
}

/**
 * What each delivery's event is, in a few words: its fields, and for a `messages` change whether
 * it is a message received or a status (with its value and error code), from the index ingress
 * keeps of the message ids each event mentions.
 */
async function describeEvents(deps: DeliveryDeps, deliveries: Delivery[]): Promise<Map<string, string>> {
  const mentions = await deps.store.history.mentionsOf([...new Set(deliveries.map((d) => d.eventId))]);
  const about = new Map<string, string>();
  for (const d of deliveries) {
    if (about.has(d.eventId)) continue;
    const mine = mentions.filter((m) => m.eventId === d.eventId);
    const statuses = mine
      .filter((m) => m.kind === "status")
      .map((m) => `${m.status ?? "?"}${m.errorCode === null ? "" : ` (${m.errorCode})`}`);
    const inbound = mine.filter((m) => m.kind === "inbound").length;
    const parts = [
      ...(statuses.length ? [`status ${[...new Set(statuses)].join(", ")}`] : []),
      ...(inbound ? [inbound === 1 ? "message received" : `${inbound} messages received`] : []),
    ];
    const others = d.fields.filter((f) => f !== "messages");
    about.set(
      d.eventId,
      [
        ...(d.fields.includes("messages") ? [parts.length ? `messages: ${parts.join("; ")}` : "messages"] : []),
        ...others,
      ].join(" · "),
    );
  }
  return about;
}

export async function getDelivery(
  deps: DeliveryDeps,
  accountId: string,
  id: string,
): Promise<{ delivery: Delivery; attempts: Attempt[]; payload: string | null }> {
  const delivery = await mustDelivery(deps, accountId, id);
  const [attempts, body] = await Promise.all([
    deps.store.history.attempts(id),
    delivery.payloadAvailable ? deps.store.history.eventBody(delivery.eventId) : Promise.resolve(null),
  ]);
  return { delivery, attempts, payload: body === null ? null : new TextDecoder().decode(body) };
}

/**
 * docs/webhooks.md#replay: a new delivery of the same body to the same endpoint, with a new webhook-id and
 * `replay_of`; 410 `payload_expired` once the payload is gone. Whatever the endpoint's state
 * (docs/webhooks.md#replay: a parked delivery whose payload exists is replayed): into a disabled endpoint the new
 * delivery parks when due, as every due delivery of a disabled endpoint does.
 */
export async function replayDelivery(
  deps: DeliveryDeps & QueueDeps,
  accountId: string,
  id: string,
  by: AuditContext,
): Promise<Delivery> {
  const original = await mustDelivery(deps, accountId, id);
  if (!original.payloadAvailable) throw new AppError("payload_expired");
  const endpoint = await mustEndpoint(deps, accountId, original.endpointId);
  const now = deps.clock.now();
  const { events, deliveries } = await replaysOf(deps, original, endpoint, now);
  const replays = deliveries.map((d) => ({
    ...d,
    replayOf: original.id,
    audit: auditEntry(deps, by, "delivery.replay", { kind: "delivery", id: d.id }, accountId, {
      replay_of: [null, original.id],
      endpoint_id: [null, endpoint.id],
    }),
  }));
  await deps.queue.enqueue(events, replays);
  const first = replays[0]?.id ?? "";
  return writtenRow(await deps.store.history.delivery(first), `delivery ${first}`);
}

/**
 * A replay's deliveries, in the endpoint's scheme as it is now: the same event, or, when a
 * `standard` delivery is replayed to an endpoint since set to `platform`, its changes split into
 * one-change events (docs/webhooks.md#signature-schemes), one delivery each.
 */
async function replaysOf(
  deps: DeliveryDeps,
  original: Delivery,
  endpoint: Endpoint,
  now: number,
): Promise<{ events: NewEvent[]; deliveries: NewDelivery[] }> {
  const same = {
    events: [],
    deliveries: [
      {
        id: newDeliveryId(deps.random, now),
        accountId: original.accountId,
        endpointId: endpoint.id,
        eventId: original.eventId,
        nextAttemptAt: now,
        replayOf: null,
        signature: endpoint.signature,
        createdAt: now,
      },
    ],
  };
  if (endpoint.signature === "standard" || original.signature === "platform") return same;
  const body = await deps.store.history.eventBody(original.eventId);
  const parsed = body === null ? null : parseEvent(body as Uint8Array<ArrayBuffer>);
  if (body === null || !parsed?.ok) throw new AppError("payload_expired");
  const share = {
    accountId: original.accountId,
    at: now,
    event: parsed.event,
    entries: parsed.event.entries,
    body,
    upstreamSignature: null,
    isTest: original.isTest,
  };
  return fanOut(deps.random, share, [endpoint], () => true);
}

export const MAX_STATS_HOURS = 24 * 7;

/** Hourly succeeded / failed attempts and parked deliveries of one endpoint, oldest hour first. */
export async function endpointStats(
  deps: DeliveryDeps,
  accountId: string,
  endpointId: string,
  hours: number,
): Promise<HourlyStats[]> {
  await mustEndpoint(deps, accountId, endpointId);
  const now = deps.clock.now();
  return deps.store.history.hourlyStats(endpointId, now - (hours - 1) * HOUR, now);
}
