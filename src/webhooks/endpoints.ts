import { changesOf, removedOf } from "../audit/changes.ts";
import { auditEntry, changeEntry, type AuditContext } from "../audit/entry.ts";
import { checkWebhookUrl, type UrlRules } from "../net/url-rules.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import { randomId } from "../runtime/random.ts";
import type { AuditAction } from "../store/audit.ts";
import type { PhoneNumber } from "../store/types.ts";
import type { Endpoint, EndpointPatch, EndpointTarget, SignatureScheme } from "../store/endpoints.ts";
import type { DeliveryQueue } from "../store/queue.ts";
import { type EventField, isEventField } from "./fields.ts";
import { generateSecret } from "./signing.ts";
import { parseEvent } from "./event.ts";
import { fanOut } from "./fan-out.ts";
import { testEventBody } from "./test-event.ts";

/** docs/webhooks.md#secret-rotation: the old secret keeps signing for 24 hours after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
const MAX_FIELDS = 40;

export type EndpointDeps = Pick<Deps, "store" | "clock" | "random" | "config"> & { urlRules: UrlRules };
/** Where new deliveries go: the running dispatcher, which stores them and has them attempted. */
export type QueueDeps = { queue: Pick<DeliveryQueue, "enqueue"> };

export interface EndpointInput {
  url?: string;
  fields?: string[];
  phone_number_id?: string | null;
  signature?: SignatureScheme;
  verify_token?: string | null;
}

export async function mustEndpoint(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<Endpoint> {
  const endpoint = await deps.store.endpoints.get(id);
  // Another account's endpoint answers exactly like a missing one.
  if (!endpoint || endpoint.accountId !== accountId) throw new AppError("not_found", `No endpoint ${id}.`);
  return endpoint;
}

function checkUrl(deps: EndpointDeps, url: string): string {
  const result = checkWebhookUrl(url, deps.urlRules);
  if (!result.ok) throw new AppError("invalid_url", `The URL is not allowed: ${result.reason}.`);
  return url;
}

/** How many unknown names an invalid_fields message lists (the list itself may be of any length). */
const LISTED_UNKNOWN = 5;

function checkFields(fields: string[]): string[] {
  const names = [...new Set(fields)];
  const unknown = names.filter((f) => !isEventField(f));
  if (unknown.length > 0) {
    const listed = unknown
      .slice(0, LISTED_UNKNOWN)
      .map((f) => JSON.stringify(f.length > 40 ? `${f.slice(0, 40)}…` : f));
    const more = unknown.length > LISTED_UNKNOWN ? ` and ${unknown.length - LISTED_UNKNOWN} more` : "";
    throw new AppError(
      "invalid_fields",
      `Unknown event field(s): ${listed.join(", ")}${more}. GET /api/webhooks/fields lists them.`,
    );
  }
  if (fields.length < 1 || fields.length > MAX_FIELDS) throw new AppError("invalid_fields");
  return names;
}

function checkNumber(deps: EndpointDeps, accountId: string, phoneNumberId: string | null): string | null {
  if (phoneNumberId === null) return null;
  const number = deps.store.directory.number(phoneNumberId);
  if (!number || number.accountId !== accountId) {
    throw new AppError("invalid_request", `phone_number_id ${phoneNumberId} is not a number of this account.`);
  }
  // docs/webhooks.md#endpoints: a single connected number (one that later disconnects stays, and gets no events
  // meanwhile).
  if (number.status !== "connected") {
    throw new AppError(
      "invalid_request",
      `phone_number_id ${phoneNumberId} is ${number.status}; an endpoint can be limited to a connected number only.`,
    );
  }
  return phoneNumberId;
}

const isLiveNumber = (n: PhoneNumber) => n.status === "connected" && n.kind !== "sandbox";

/** docs/webhooks.md#endpoints: an account needs a live (not sandbox) connected number before it adds an endpoint. */
function hasLiveNumber(deps: EndpointDeps, accountId: string): boolean {
  return deps.store.directory.numbers(accountId).some(isLiveNumber);
}

/** An endpoint's entry: by `by`, of `action`, with what `patch` changes of `before` (null: created). */
function entryOf(
  deps: EndpointDeps,
  by: AuditContext,
  action: AuditAction,
  before: Endpoint | null,
  after: Endpoint | EndpointPatch,
  endpoint: Pick<Endpoint, "id" | "accountId">,
) {
  const object = { kind: "endpoint", id: endpoint.id };
  const changes = changesOf(before, after);
  return before === null
    ? auditEntry(deps, by, action, object, endpoint.accountId, changes)
    : changeEntry(deps, by, action, object, endpoint.accountId, changes);
}

/** Creates an endpoint; its secret is returned only here. */
export async function createEndpoint(
  deps: EndpointDeps,
  accountId: string,
  input: Required<Pick<EndpointInput, "url" | "fields">> & EndpointInput,
  by: AuditContext,
) {
  if (!hasLiveNumber(deps, accountId)) throw new AppError("no_numbers");
  const url = checkUrl(deps, input.url);
  const fields = checkFields(input.fields);
  const phoneNumberId = checkNumber(deps, accountId, input.phone_number_id ?? null);
  const now = deps.clock.now();
  const endpoint: Endpoint = {
    id: randomId(deps.random, "ep"),
    accountId,
    url,
    fields,
    phoneNumberId,
    secret: generateSecret(deps.random),
    previousSecret: null,
    previousSecretExpiresAt: null,
    signature: input.signature ?? "standard",
    verifyToken: input.verify_token ?? null,
    enabled: true,
    disabledReason: null,
    consecutiveFailures: 0,
    lastSuccessAt: null,
    warnedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  return deps.store.endpoints.create(endpoint, entryOf(deps, by, "endpoint.create", null, endpoint, endpoint));
}

/** Changes an endpoint (`action` names how: an edit, Enable, a rotation), with its entry by `by`. */
async function change(
  deps: EndpointDeps,
  by: AuditContext,
  action: AuditAction,
  endpoint: Endpoint,
  patch: EndpointPatch,
): Promise<Endpoint> {
  const entry = entryOf(deps, by, action, endpoint, patch, endpoint);
  return orNotFound(await deps.store.endpoints.update(endpoint.id, patch, entry), `endpoint ${endpoint.id}`);
}

export async function updateEndpoint(
  deps: EndpointDeps,
  accountId: string,
  id: string,
  input: EndpointInput,
  by: AuditContext,
): Promise<Endpoint> {
  const endpoint = await mustEndpoint(deps, accountId, id);
  const patch: EndpointPatch = { updatedAt: deps.clock.now() };
  if (input.url !== undefined) patch.url = checkUrl(deps, input.url);
  if (input.fields !== undefined) patch.fields = checkFields(input.fields);
  if (input.phone_number_id !== undefined) patch.phoneNumberId = checkNumber(deps, accountId, input.phone_number_id);
  if (input.signature !== undefined) patch.signature = input.signature;
  if (input.verify_token !== undefined) patch.verifyToken = input.verify_token;
  return change(deps, by, "endpoint.update", endpoint, patch);
}

export async function deleteEndpoint(deps: EndpointDeps, accountId: string, id: string, by: AuditContext) {
  const endpoint = await mustEndpoint(deps, accountId, id);
  // What it was: the entry is all that is left of it.
  const entry = auditEntry(deps, by, "endpoint.delete", { kind: "endpoint", id }, accountId, removedOf(endpoint));
  await deps.store.endpoints.delete(id, entry);
}

/**
 * docs/webhooks.md#endpoint-health-and-disabling: Enable resets the failure count. Deliveries parked meanwhile stay
 * parked (replay them).
 */
export async function enableEndpoint(
  deps: EndpointDeps,
  accountId: string,
  id: string,
  by: AuditContext,
): Promise<Endpoint> {
  const endpoint = await mustEndpoint(deps, accountId, id);
  return change(deps, by, "endpoint.enable", endpoint, {
    enabled: true,
    disabledReason: null,
    consecutiveFailures: 0,
    warnedAt: null,
    updatedAt: deps.clock.now(),
  });
}

/** A new secret, shown once; the current one keeps signing beside it for ROTATION_OVERLAP_MS. */
export async function rotateSecret(
  deps: EndpointDeps,
  accountId: string,
  id: string,
  by: AuditContext,
): Promise<{ secret: string; endpoint: Endpoint }> {
  const endpoint = await mustEndpoint(deps, accountId, id);
  const now = deps.clock.now();
  const secret = generateSecret(deps.random);
  const updated = await change(deps, by, "endpoint.rotate_secret", endpoint, {
    secret,
    previousSecret: endpoint.secret,
    previousSecretExpiresAt: now + ROTATION_OVERLAP_MS,
    updatedAt: now,
  });
  return { secret, endpoint: updated };
}

/**
 * Queues one test event (docs/webhooks.md#test-events) of `field` about `number` (Send test, a coexistence pre-flight)
 * through the normal pipeline, retries included, with a delivery to each endpoint in its scheme's shape (see
 * fanOut); returns the deliveries.
 */
export async function queueTestEvent(
  deps: Pick<Deps, "clock" | "random" | "config"> & QueueDeps,
  accountId: string,
  number: Pick<PhoneNumber, "wabaId" | "phoneNumberId" | "displayPhoneNumber"> | undefined,
  targets: EndpointTarget[],
  field: EventField = "messages",
): Promise<{ endpointId: string; deliveryId: string }[]> {
  const now = deps.clock.now();
  const body = testEventBody(deps.config.platform, {
    field,
    wabaId: number?.wabaId ?? "0",
    phoneNumberId: number?.phoneNumberId ?? "0",
    displayPhoneNumber: number?.displayPhoneNumber ?? null,
    messageId: `wamid.proxy_test.${randomId(deps.random, "t", 20).slice(2)}`,
    now,
  });
  const parsed = parseEvent(body);
  if (!parsed.ok) throw new Error(`the test event does not parse: ${parsed.reason}`);
  const share = {
    accountId,
    at: now,
    event: parsed.event,
    entries: parsed.event.entries,
    body,
    upstreamSignature: null,
    isTest: true,
  };
  // A test goes to each endpoint named, whatever its fields.
  const { events, deliveries } = fanOut(deps.random, share, targets, () => true);
  await deps.queue.enqueue(events, deliveries);
  return deliveries.map((d) => ({ endpointId: d.endpointId, deliveryId: d.id }));
}

/**
 * Send test (docs/webhooks.md#test-events): a synthetic event of `field` (`messages` when none is chosen) queued
 * through the normal pipeline, retries included.
 */
export async function sendTest(
  deps: EndpointDeps & QueueDeps,
  accountId: string,
  id: string,
  field = "messages",
): Promise<string> {
  const endpoint = await mustEndpoint(deps, accountId, id);
  if (!isEventField(field)) {
    throw new AppError(
      "invalid_fields",
      `Unknown event field ${JSON.stringify(field)}. GET /api/webhooks/fields lists them.`,
    );
  }
  const number =
    (endpoint.phoneNumberId ? deps.store.directory.number(endpoint.phoneNumberId) : undefined) ??
    deps.store.directory.numbers(accountId).find(isLiveNumber) ??
    deps.store.directory.numbers(accountId)[0];
  const [delivery] = await queueTestEvent(deps, accountId, number, [endpoint], field);
  if (!delivery) throw new Error(`a test event to endpoint ${endpoint.id} queued no delivery`);
  return delivery.deliveryId;
}
