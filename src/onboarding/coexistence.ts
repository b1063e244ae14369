import { t } from "elysia";
import { iso } from "../http/iso-time.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import { graphCall } from "../numbers/graph-call.ts";
import { accountNumber } from "../numbers/connect.ts";
import { randomId } from "../runtime/random.ts";
import type { Onboarding } from "../store/onboardings.ts";
import type { PhoneNumber } from "../store/types.ts";
import { queueTestEvent, type QueueDeps } from "../webhooks/endpoints.ts";
import type { SignupDeps } from "./steps.ts";

/**
 * The two one-time syncs of a coexistence number (issue 20): contacts and chat history from the
 * business app, which the platform allows once each, within 24 hours of onboarding. Their events
 * go to the endpoints subscribed to their fields, and history payloads are deleted as soon as a
 * delivery ends (docs/webhooks.md#retention): hence the pre-flight, the test event (docs/webhooks.md#test-events) sent
 * to those endpoints first, and the sync held back until one of them answered it 2xx.
 */
export const SYNCS = [
  { type: "smb_app_state_sync", field: "smb_app_state_sync", label: "Contacts", what: "the business app's contacts" },
  {
    type: "history",
    field: "history",
    label: "Chat history",
    what: "the business app's chat history (up to 6 months)",
  },
] as const;

export type SyncType = (typeof SYNCS)[number]["type"];

/** How a pre-flight's delivery to one endpoint stands. */
export type PreflightResult = "passed" | "failed" | "retrying" | "waiting";

/** The platform's window for the syncs, from onboarding. */
export const SYNC_WINDOW_MS = 24 * 3_600_000;

export const syncTypeSchema = t.Union(SYNCS.map((s) => t.Literal(s.type)));
export const preflightBody = t.Object({ sync_type: syncTypeSchema }, { additionalProperties: false });
export const startSyncBody = t.Object(
  {
    sync_type: syncTypeSchema,
    override: t.Optional(
      t.Boolean({ description: "start although no endpoint passed the pre-flight: events nobody receives are lost" }),
    ),
  },
  { additionalProperties: false },
);

export type CoexistenceDeps = SignupDeps & QueueDeps;

function coexistenceNumber(deps: SignupDeps, accountId: string, phoneNumberId: string): PhoneNumber {
  const number = accountNumber(deps, accountId, phoneNumberId);
  if (number.kind !== "coexistence")
    throw new AppError(
      "invalid_request",
      `Number ${phoneNumberId} is not a coexistence number: it has no business app to sync from.`,
    );
  return number;
}

/**
 * The number's onboarding record in its account, made for a coexistence number its operator
 * connected by hand (its 24 hours then count from when it was connected). Another account's
 * unfinished signup of the number gives way: the number is this account's (issue 26).
 */
async function onboardingOf(deps: SignupDeps, number: PhoneNumber): Promise<Onboarding> {
  const now = deps.clock.now();
  const found = await deps.store.onboardings.byNumber(number.accountId, number.phoneNumberId, now);
  if (found) return found;
  const made = await deps.store.onboardings.create(
    {
      id: randomId(deps.random, "sgn"),
      accountId: number.accountId,
      phoneNumberId: number.phoneNumberId,
      wabaId: number.wabaId,
      kind: "coexistence",
      code: null,
      codeHash: null,
      accessToken: null,
      pin: null,
      steps: {},
      preflights: {},
      syncs: {},
      finishedAt: number.createdAt,
      leaseUntil: null,
      expiresAt: null,
      createdAt: now,
      updatedAt: now,
    },
    { now, numberIsTheirs: true },
  );
  // Only another account's finished onboarding of the number stays: a record the operator must sort out.
  if ("refused" in made)
    throw new AppError(
      "conflict",
      `Number ${number.phoneNumberId} has another account's onboarding: ask your operator.`,
    );
  return made.onboarding;
}

function syncOf(type: SyncType): (typeof SYNCS)[number] {
  const sync = SYNCS.find((s) => s.type === type);
  if (!sync) throw new Error(`no sync ${type}`);
  return sync;
}

/** The enabled endpoints that receive a sync's events for this number. */
async function receivers(deps: SignupDeps, number: PhoneNumber, field: string) {
  return (await deps.store.endpoints.ofAccount(number.accountId)).filter(
    (e) =>
      e.enabled && e.fields.includes(field) && (e.phoneNumberId === null || e.phoneNumberId === number.phoneNumberId),
  );
}

/**
 * Runs the pre-flight for a sync: one test event (docs/webhooks.md#test-events) through the normal pipeline, retries
 * included, with a delivery to each enabled endpoint subscribed to the sync's field.
 */
export async function runPreflight(
  deps: CoexistenceDeps,
  accountId: string,
  phoneNumberId: string,
  type: SyncType,
  by: AuditContext,
) {
  const number = coexistenceNumber(deps, accountId, phoneNumberId);
  const sync = syncOf(type);
  const endpoints = await receivers(deps, number, sync.field);
  if (endpoints.length === 0) {
    throw new AppError(
      "invalid_request",
      `No enabled endpoint receives ${sync.field} events for this number: add one (or add the field to one) first, or ${sync.what} will reach nobody.`,
    );
  }
  const o = await onboardingOf(deps, number);
  const now = deps.clock.now();
  const deliveries = await queueTestEvent(deps, accountId, number, endpoints);
  const entry = auditEntry(deps, by, "coexistence.preflight", { kind: "number", id: phoneNumberId }, accountId, {
    sync_type: [null, type],
    endpoint_ids: [null, deliveries.map((d) => d.endpointId)],
  });
  await deps.store.onboardings.recordPreflight(o.id, sync.field, { at: now, deliveries }, now, entry);
  return coexistenceView(deps, accountId, phoneNumberId);
}

/**
 * Right after a coexistence number is onboarded: the pre-flight of each sync that some endpoint
 * would receive, so the number's page shows their answers by the time the user opens it.
 */
export async function preflightReceivers(deps: CoexistenceDeps, o: Onboarding, by: AuditContext): Promise<void> {
  const number = deps.store.directory.number(o.phoneNumberId);
  if (number?.kind !== "coexistence") return;
  for (const sync of SYNCS) {
    if ((await receivers(deps, number, sync.field)).length > 0)
      await runPreflight(deps, o.accountId, o.phoneNumberId, sync.type, by);
  }
}

/** Asks the platform for a sync, once, within its 24 hours, and only after a pre-flight passed unless overridden. */
export async function startSync(
  deps: CoexistenceDeps,
  accountId: string,
  phoneNumberId: string,
  input: typeof startSyncBody.static,
  by: AuditContext,
) {
  const number = coexistenceNumber(deps, accountId, phoneNumberId);
  const sync = syncOf(input.sync_type);
  const o = await onboardingOf(deps, number);
  const state = await syncState(deps, number, o, sync);
  if (state.requested)
    throw new AppError(
      "sync_unavailable",
      `The ${sync.label.toLowerCase()} sync was already started ${iso(state.requested.at)}; the platform allows it once.`,
    );
  if (!state.windowOpen)
    throw new AppError(
      "sync_unavailable",
      `The platform allows this sync only within 24 hours of onboarding; that ended ${iso(state.windowEndsAt)}.`,
    );
  if (!state.preflight.passed && !input.override) throw new AppError("preflight_required");
  const waba = deps.store.directory.waba(number.wabaId);
  if (!waba) throw new AppError("not_found", `No WABA ${number.wabaId}.`);
  const result = await graphCall(deps, {
    method: "POST",
    path: `${encodeURIComponent(number.phoneNumberId)}/smb_app_data`,
    token: waba,
    json: { messaging_product: deps.config.platform.product, sync_type: sync.type },
  });
  if (!result.ok) throw new AppError("invalid_credentials", `The platform did not start the sync: ${result.reason}.`);
  const now = deps.clock.now();
  const requestId = typeof result.body.request_id === "string" ? result.body.request_id : null;
  const overridden = !state.preflight.passed;
  const entry = auditEntry(deps, by, "coexistence.sync", { kind: "number", id: phoneNumberId }, accountId, {
    sync_type: [null, sync.type],
    overridden: [null, overridden],
  });
  await deps.store.onboardings.recordSync(o.id, sync.type, { at: now, requestId, overridden }, now, entry);
  return coexistenceView(deps, accountId, phoneNumberId);
}

async function preflightResults(deps: SignupDeps, o: Onboarding | null, field: string) {
  const preflight = o?.preflights[field];
  if (!preflight) return { at: null, passed: false, endpoints: [] };
  const endpoints = await Promise.all(
    preflight.deliveries.map(async ({ endpointId, deliveryId }) => {
      const [endpoint, delivery, attempts] = await Promise.all([
        deps.store.endpoints.get(endpointId),
        deps.store.history.delivery(deliveryId),
        deps.store.history.attempts(deliveryId),
      ]);
      const last = attempts.at(-1);
      const result: PreflightResult =
        delivery?.status === "succeeded"
          ? "passed"
          : delivery?.status === "parked"
            ? "failed"
            : last
              ? "retrying"
              : "waiting";
      return {
        endpoint_id: endpointId,
        url: endpoint?.url ?? null,
        delivery_id: deliveryId,
        result,
        last_status_code: last?.statusCode ?? null,
        last_error: last?.error ?? null,
      };
    }),
  );
  return { at: iso(preflight.at), passed: endpoints.some((e) => e.result === "passed"), endpoints };
}

const windowEnd = (number: PhoneNumber, o: Onboarding | null) => (o?.finishedAt ?? number.createdAt) + SYNC_WINDOW_MS;

async function syncState(deps: SignupDeps, number: PhoneNumber, o: Onboarding | null, sync: (typeof SYNCS)[number]) {
  const windowEndsAt = windowEnd(number, o);
  return {
    requested: o?.syncs[sync.type] ?? null,
    windowEndsAt,
    windowOpen: deps.clock.now() < windowEndsAt,
    preflight: await preflightResults(deps, o, sync.field),
    receivers: (await receivers(deps, number, sync.field)).length,
  };
}

/** A coexistence number's syncs: the window, each sync's pre-flight by endpoint, and whether it was started. */
export async function coexistenceView(deps: SignupDeps, accountId: string, phoneNumberId: string) {
  const number = coexistenceNumber(deps, accountId, phoneNumberId);
  const o = (await deps.store.onboardings.byNumber(accountId, phoneNumberId, deps.clock.now())) ?? null;
  const syncs = await Promise.all(
    SYNCS.map(async (sync) => {
      const state = await syncState(deps, number, o, sync);
      return {
        sync_type: sync.type,
        field: sync.field,
        label: sync.label,
        what: sync.what,
        receiving_endpoints: state.receivers,
        preflight: state.preflight,
        started: state.requested && {
          at: iso(state.requested.at),
          request_id: state.requested.requestId,
          overridden: state.requested.overridden,
        },
        can_start: !state.requested && state.windowOpen,
      };
    }),
  );
  const ends = windowEnd(number, o);
  return { phone_number_id: phoneNumberId, window_ends_at: iso(ends), window_open: deps.clock.now() < ends, syncs };
}

export type CoexistenceView = Awaited<ReturnType<typeof coexistenceView>>;
