import { optionalBody } from "../http/optional-body.ts";
import { constantTimeEqual } from "../crypto/constant-time.ts";
import { Elysia, t } from "elysia";
import { requireSession } from "../auth/session-routes.ts";
import { AppError } from "../errors/catalog.ts";
import type { AuditContext } from "../audit/entry.ts";
import type { Deps } from "../deps.ts";
import type { RouteContext } from "../http/route-context.ts";
import { requestIdOf } from "../http/request-context.ts";
import * as deliveries from "./deliveries.ts";
import type { Dispatcher } from "./dispatcher.ts";
import * as endpoints from "./endpoints.ts";
import { latestRecover, recoveryView, startRecover } from "./recover.ts";
import { EVENT_FIELDS } from "./fields.ts";
import type { EventCounter } from "./event-counts.ts";
import { acceptEvent } from "./ingress.ts";
import { ingressSpan, type IngressSpan } from "./traces.ts";
import * as s from "./schemas.ts";
import { verifyEndpoint, type VerifyDeps } from "./verify.ts";
import { attemptView, deliveryView, endpointView, statsView } from "./views.ts";

/** docs/webhooks.md#intake: the subscription handshake and the event intake. */
export function ingressRoutes(deps: Deps, dispatcher: Dispatcher, counter: EventCounter) {
  const ingressDeps = { ...deps, queue: dispatcher };

  /**
   * One upstream event: checked, split and stored before the 200 (see acceptEvent). Its body has
   * been read whole already, under MAX_EVENT_BYTES and the body deadline (http/request-body.ts).
   */
  async function receive(request: Request, span: IngressSpan | null): Promise<Response> {
    const started = performance.now();
    const bytes = new Uint8Array(await request.arrayBuffer());
    const result = await acceptEvent(ingressDeps, bytes, request.headers.get("x-hub-signature-256"), span?.context);
    if (result.kind === "rejected") {
      deps.metrics.webhookEvents.inc({ result: result.error });
      deps.logger.warn("webhook event rejected", { error: result.error, reason: result.reason, bytes: bytes.length });
      throw new AppError(
        result.error,
        result.error === "invalid_event" ? `The body is not a webhook event: ${result.reason}.` : undefined,
      );
    }
    deps.metrics.webhookEvents.inc({ result: "accepted" });
    counter.count(result.deliveries > 0);
    deps.metrics.webhookAckLatency.observe((performance.now() - started) / 1000);
    span?.accepted(result.events, result.deliveries);
    return new Response("ok", { headers: { "content-type": "text/plain" } });
  }

  return (
    new Elysia()
      .get("/webhooks/upstream", ({ request }) => {
        const query = new URL(request.url).searchParams;
        const expected = deps.config.webhookVerifyToken;
        const given = query.get("hub.verify_token") ?? "";
        const challenge = query.get("hub.challenge");
        if (
          query.get("hub.mode") !== "subscribe" ||
          expected === null ||
          challenge === null ||
          !constantTimeEqual(given, expected)
        ) {
          throw new AppError("verify_token_mismatch");
        }
        return new Response(challenge, { headers: { "content-type": "text/plain" } });
      })
      // `context.request` and `context.requestId` only, never the whole context (see requestContext's onError).
      .post(
        "/webhooks/upstream",
        async (context) => {
          const requestId = requestIdOf((context as { requestId?: unknown }).requestId, deps.random);
          const span = ingressSpan(deps.tracing, context.request, requestId);
          if (!span) return receive(context.request, null);
          try {
            const response = await receive(context.request, span);
            span.end(response.status);
            return response;
          } catch (error) {
            span.end(error instanceof AppError ? error.status : 500);
            throw error;
          }
        },
        { parse: "none" },
      )
  );
}

/** What the relay's API routes work with: the service's parts and the relay's. */
type ApiDeps = Deps & endpoints.EndpointDeps & endpoints.QueueDeps & Pick<VerifyDeps, "client">;
/** A signed-in user's request: their account, and who makes the changes, for the audit log. */
type Session = { accountId: string; by: () => Promise<AuditContext> };
type OnEndpoint<Body = unknown, Query = Record<string, unknown>> = Session &
  Pick<RouteContext<{ id: string }, Body, Query>, "params" | "body" | "query" | "set">;

const listEndpoints =
  (deps: Deps) =>
  async ({ accountId }: Session) => ({ data: (await deps.store.endpoints.ofAccount(accountId)).map(endpointView) });

const addEndpoint =
  (deps: ApiDeps) =>
  async ({
    accountId,
    body,
    by,
    set,
  }: Session & Pick<RouteContext<unknown, typeof s.createEndpointBody.static>, "body" | "set">) => {
    const endpoint = await endpoints.createEndpoint(deps, accountId, body, await by());
    set.status = 201;
    return { ...endpointView(endpoint), secret: endpoint.secret };
  };

const readEndpoint =
  (deps: Deps) =>
  async ({ accountId, params }: OnEndpoint) =>
    endpointView(await endpoints.mustEndpoint(deps, accountId, params.id));

const changeEndpoint =
  (deps: ApiDeps) =>
  async ({ accountId, params, body, by }: OnEndpoint<typeof s.updateEndpointBody.static>) =>
    endpointView(await endpoints.updateEndpoint(deps, accountId, params.id, body, await by()));

const removeEndpoint =
  (deps: ApiDeps) =>
  async ({ accountId, params, by, set }: OnEndpoint) => {
    await endpoints.deleteEndpoint(deps, accountId, params.id, await by());
    set.status = 204;
  };

const enableEndpoint =
  (deps: ApiDeps) =>
  async ({ accountId, params, by }: OnEndpoint) =>
    endpointView(await endpoints.enableEndpoint(deps, accountId, params.id, await by()));

const rotateSecret =
  (deps: ApiDeps) =>
  async ({ accountId, params, by }: OnEndpoint) => {
    const { secret } = await endpoints.rotateSecret(deps, accountId, params.id, await by());
    return { secret };
  };

const recoverBody = t.Object({ since: t.String({ maxLength: 40 }) });

const recover =
  (deps: ApiDeps) =>
  async ({ accountId, params, body, by, set }: OnEndpoint<typeof recoverBody.static>) => {
    const recovery = await startRecover(deps, accountId, params.id, body.since, await by());
    set.status = 202;
    return recoveryView(recovery);
  };

const readRecovery =
  (deps: Deps) =>
  async ({ accountId, params }: OnEndpoint) => {
    const recovery = await latestRecover(deps, accountId, params.id);
    return recovery ? recoveryView(recovery) : null;
  };

const sendTest =
  (deps: ApiDeps) =>
  async ({ accountId, params, body, set }: OnEndpoint<typeof s.sendTestBody.static>) => {
    const deliveryId = await endpoints.sendTest(deps, accountId, params.id, body.field);
    set.status = 202;
    return { delivery_id: deliveryId };
  };

const verify =
  (deps: ApiDeps) =>
  async ({ accountId, params }: OnEndpoint) =>
    verifyEndpoint(deps, accountId, params.id);

const readStats =
  (deps: Deps) =>
  async ({ accountId, params, query }: OnEndpoint<unknown, typeof s.statsQuery.static>) => {
    const hours = query.hours ?? 24;
    return { hours, data: (await deliveries.endpointStats(deps, accountId, params.id, hours)).map(statsView) };
  };

const listDeliveries =
  (deps: Deps) =>
  async ({ accountId, query }: Session & { query: typeof s.deliveryQuery.static }) => {
    const page = await deliveries.listDeliveries(deps, accountId, query);
    return {
      data: page.data.map((d) => ({ ...deliveryView(d), about: page.about.get(d.eventId) ?? d.fields.join(" · ") })),
      next_cursor: page.nextCursor,
    };
  };

const readDelivery =
  (deps: Deps) =>
  async ({ accountId, params }: OnEndpoint) => {
    const { delivery, attempts, payload } = await deliveries.getDelivery(deps, accountId, params.id);
    return { ...deliveryView(delivery), attempts: attempts.map(attemptView), payload };
  };

const replayDelivery =
  (deps: ApiDeps) =>
  async ({ accountId, params, by, set }: OnEndpoint) => {
    const replay = await deliveries.replayDelivery(deps, accountId, params.id, await by());
    set.status = 201;
    return deliveryView(replay);
  };

const SUMMARY = {
  add: "Add an endpoint; the signing secret (whsec_…) is shown only in this answer. 409 no_numbers, 422 invalid_url / invalid_fields",
  recover:
    "Bulk recover: replay every parked delivery of this endpoint created since `since` (ISO 8601), in the background; payloads already gone and deliveries replayed before are skipped and counted; while one runs, asking again answers it (202)",
  test: "Send test: queue a proxy_test event with one change of `field` (default messages) to this endpoint, in its signature scheme's shape",
  verify: "Verify: GET the URL with hub.mode, hub.verify_token and hub.challenge, as the platform does",
  stats:
    "Hourly buckets (oldest first) of succeeded and failed attempts and of deliveries parked, for a chart; hours defaults to 24",
  deliveries:
    "List deliveries, newest first, each saying what its event is (about); filter by endpoint_id, status (pending, succeeded, parked), field, number, message_id, time (from, to: ISO 8601) and last attempt's status code (last_status); page with next_cursor",
  delivery: "A delivery with its attempts, next_attempt_at while pending, replay_of, and its payload while kept",
};

/**
 * The webhook part of the dashboard API (docs/operations.md#the-dashboard-and-its-api); thin routes over endpoints.ts
 * and deliveries.ts.
 */
export function webhookApiRoutes(
  deps: Deps,
  endpointDeps: endpoints.EndpointDeps & endpoints.QueueDeps & Pick<VerifyDeps, "client">,
) {
  const d: ApiDeps = { ...deps, ...endpointDeps };
  const doc = (summary: string) => ({ tags: ["Webhooks"], summary });
  const params = t.Object({ id: t.String({ maxLength: 64 }) });
  const open = new Elysia().get("/api/webhooks/fields", () => ({ fields: [...EVENT_FIELDS] }), {
    detail: doc("The event field names an endpoint accepts (docs/webhooks.md#event-fields); needs no login"),
  });
  const signedIn = new Elysia()
    .use(requireSession(deps))
    .get("/api/endpoints", listEndpoints(deps), { detail: doc("List the account's webhook endpoints") })
    .post("/api/endpoints", addEndpoint(d), { body: s.createEndpointBody, detail: doc(SUMMARY.add) })
    .get("/api/endpoints/:id", readEndpoint(deps), { params, detail: doc("Read an endpoint (never its secret)") })
    .patch("/api/endpoints/:id", changeEndpoint(d), {
      params,
      body: s.updateEndpointBody,
      detail: doc("Change an endpoint's url, fields or phone_number_id"),
    })
    .delete("/api/endpoints/:id", removeEndpoint(d), { params, detail: doc("Delete an endpoint with its deliveries") })
    .post("/api/endpoints/:id/enable", enableEndpoint(d), {
      params,
      detail: doc("Enable a disabled endpoint; resets its failure count"),
    })
    .post("/api/endpoints/:id/rotate-secret", rotateSecret(d), {
      params,
      detail: doc("New signing secret, shown once; the old one also signs for 24 hours"),
    })
    .post("/api/endpoints/:id/recover", recover(d), { params, body: recoverBody, detail: doc(SUMMARY.recover) })
    .get("/api/endpoints/:id/recover", readRecovery(deps), {
      params,
      detail: doc("The endpoint's latest bulk recover and its progress (null when none ran)"),
    })
    .post("/api/endpoints/:id/test", sendTest(d), {
      params,
      ...optionalBody(s.sendTestBody),
      detail: doc(SUMMARY.test),
    })
    .post("/api/endpoints/:id/verify", verify(d), { params, detail: doc(SUMMARY.verify) })
    .get("/api/endpoints/:id/stats", readStats(deps), { params, query: s.statsQuery, detail: doc(SUMMARY.stats) })
    .get("/api/deliveries", listDeliveries(deps), { query: s.deliveryQuery, detail: doc(SUMMARY.deliveries) })
    .get("/api/deliveries/:id", readDelivery(deps), { params, detail: doc(SUMMARY.delivery) })
    .post("/api/deliveries/:id/replay", replayDelivery(d), {
      params,
      detail: doc("Replay into a new delivery (new id, replay_of set); 410 payload_expired"),
    });
  return new Elysia().use(open).use(signedIn);
}
