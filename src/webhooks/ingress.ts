import type { SpanContext } from "@opentelemetry/api";
import type { Deps } from "../deps.ts";
import type { Waba } from "../store/types.ts";
import type { EndpointTarget } from "../store/endpoints.ts";
import type { NewDelivery, NewEvent } from "../store/queue.ts";
import { parseEvent, wrapEntries, type EventChange, type EventEntry, type UpstreamEvent } from "./event.ts";
import { hubSignatureMatches } from "./hub-signature.ts";
import { fanOut } from "./fan-out.ts";

/** The platform sends at most about 3 MB; anything past this is refused with 413. */
export const MAX_EVENT_BYTES = 10 * 1024 * 1024;
/** How many of an event's dropped entries are named in its log line. */
const LOGGED_DROPPED_IDS = 5;

export type IngressDeps = Pick<Deps, "store" | "config" | "clock" | "random" | "logger"> & {
  /** The delivery queue; `origin` is the trace the event arrived in, when traced. */
  queue: { enqueue(events: NewEvent[], deliveries: NewDelivery[], origin?: SpanContext): Promise<void> };
};

export type IngressResult =
  | { kind: "accepted"; events: number; deliveries: number }
  | { kind: "rejected"; error: "invalid_signature" | "invalid_event"; reason: string };

/** Which entries a valid signature speaks for (docs/webhooks.md#intake). */
type Trust = { all: true } | { all: false; appSecret: string };

function trustOf(
  deps: IngressDeps,
  bytes: Uint8Array,
  header: string | null,
  event: UpstreamEvent | null,
): Trust | null {
  if (hubSignatureMatches(header, deps.config.appSecret, bytes)) return { all: true };
  if (!event) return null;
  const byoSecrets = new Set<string>();
  for (const entry of event.entries) {
    const secret = deps.store.directory.waba(entry.wabaId)?.appSecret;
    if (secret) byoSecrets.add(secret);
  }
  for (const secret of byoSecrets)
    if (hubSignatureMatches(header, secret, bytes)) return { all: false, appSecret: secret };
  return null;
}

/** Does one change go to this endpoint? (its fields, and its number when set) */
export function changeMatches(target: EndpointTarget, change: EventChange): boolean {
  return (
    target.fields.includes(change.field) &&
    (target.phoneNumberId === null || change.phoneNumberId === target.phoneNumberId)
  );
}

/** The endpoints that get a delivery of these entries: at least one change must match. */
export function matchingTargets(targets: EndpointTarget[], entries: EventEntry[]): EndpointTarget[] {
  return targets.filter((t) => entries.some((e) => e.changes.some((c) => changeMatches(t, c))));
}

/**
 * The entries by the account owning their WABA; an entry of an unknown WABA, or of one another app
 * signed for, is dropped (and counted in one log line per event: a 10 MB body can hold 150,000).
 */
function entriesByAccount(
  deps: IngressDeps,
  entries: EventEntry[],
  trust: NonNullable<ReturnType<typeof trustOf>>,
): { byAccount: Map<string, EventEntry[]>; droppedCount: number } {
  const byAccount = new Map<string, EventEntry[]>();
  const dropped = { unknownWaba: 0, anotherApp: 0, firstIds: [] as string[] };
  for (const entry of entries) {
    const waba: Waba | undefined = deps.store.directory.waba(entry.wabaId);
    if (!waba || (!trust.all && waba.appSecret !== trust.appSecret)) {
      dropped[waba ? "anotherApp" : "unknownWaba"]++;
      if (dropped.firstIds.length < LOGGED_DROPPED_IDS) dropped.firstIds.push(entry.wabaId);
      continue;
    }
    const list = byAccount.get(waba.accountId);
    if (list) list.push(entry);
    else byAccount.set(waba.accountId, [entry]);
  }
  const droppedCount = dropped.unknownWaba + dropped.anotherApp;
  if (droppedCount > 0) {
    deps.logger.warn("webhook entries dropped", {
      entries: droppedCount,
      unknown_waba: dropped.unknownWaba,
      signed_by_another_app: dropped.anotherApp,
      first_waba_ids: dropped.firstIds,
    });
  }
  return { byAccount, droppedCount };
}

/**
 * Checks, splits and stores one upstream event (docs/webhooks.md#intake, docs/webhooks.md#batches). Entries go to the
 * account owning their WABA; when every entry goes to one account the body is kept byte for byte with
 * upstream's signature, otherwise each account gets a new wrapper around its own entries' bytes.
 * Every event and delivery is committed in one transaction before this resolves.
 */
export async function acceptEvent(
  deps: IngressDeps,
  bytes: Uint8Array<ArrayBuffer>,
  signature: string | null,
  origin?: SpanContext,
): Promise<IngressResult> {
  const parsed = parseEvent(bytes);
  const trust = trustOf(deps, bytes, signature, parsed.ok ? parsed.event : null);
  if (!trust) return { kind: "rejected", error: "invalid_signature", reason: "no secret matches X-Hub-Signature-256" };
  if (!parsed.ok) return { kind: "rejected", error: "invalid_event", reason: parsed.reason };
  const event = parsed.event;

  const { byAccount, droppedCount } = entriesByAccount(deps, event.entries, trust);
  const untouched = droppedCount === 0 && byAccount.size === 1;
  const now = deps.clock.now();
  const events: NewEvent[] = [];
  const deliveries: NewDelivery[] = [];
  for (const [accountId, entries] of byAccount) {
    const targets = matchingTargets(deps.store.endpoints.targets(accountId), entries);
    if (targets.length === 0) continue;
    const share = {
      accountId,
      at: now,
      event,
      entries,
      body: untouched ? bytes : wrapEntries(event, entries),
      upstreamSignature: untouched ? signature : null,
      isTest: false,
    };
    const out = fanOut(deps.random, share, targets, changeMatches);
    events.push(...out.events);
    deliveries.push(...out.deliveries);
  }
  if (events.length > 0) await deps.queue.enqueue(events, deliveries, origin);
  return { kind: "accepted", events: events.length, deliveries: deliveries.length };
}
