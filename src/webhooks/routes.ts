import { optionalBody } from "../http/optional-body.ts";
import { constantTimeEqual } from "../crypto/constant-time.ts";
import { Elysia, t } from "elysia";
import { requireSession } from "../auth/session-routes.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
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

const tag = { tags: ["Webhooks"] };

/**
 * The webhook part of the dashboard API (docs/operations.md#the-dashboard-and-its-api); thin routes over endpoints.ts
 * and deliveries.ts.
 */
export function webhookApiRoutes(
  deps: Deps,
  endpointDeps: endpoints.EndpointDeps & endpoints.QueueDeps & Pick<VerifyDeps, "client">,
) {
  const open = new Elysia().get("/api/webhooks/fields", () => ({ fields: [...EVENT_FIELDS] }), {
    detail: {
      ...tag,
      summary: "The event field names an endpoint accepts (docs/webhooks.md#event-fields); needs no login",
    },
  });
  const idParams = t.Object({ id: t.String({ maxLength: 64 }) });
  const signedIn = new Elysia()
    .use(requireSession(deps))
    .get(
      "/api/endpoints",
      async ({ accountId }) => ({ data: (await deps.store.endpoints.ofAccount(accountId)).map(endpointView) }),
      {
        detail: { ...tag, summary: "List the account's webhook endpoints" },
      },
    )
    .post(
      "/api/endpoints",
      async ({ accountId, body, by, set }) => {
        const endpoint = await endpoints.createEndpoint(endpointDeps, accountId, body, await by());
        set.status = 201;
        return { ...endpointView(endpoint), secret: endpoint.secret };
      },
      {
        body: s.createEndpointBody,
        detail: {
          ...tag,
          summary:
            "Add an endpoint; the signing secret (whsec_…) is shown only in this answer. 409 no_numbers, 422 invalid_url / invalid_fields",
        },
      },
    )
    .get(
      "/api/endpoints/:id",
      async ({ accountId, params }) => endpointView(await endpoints.mustEndpoint(deps, accountId, params.id)),
      {
        params: idParams,
        detail: { ...tag, summary: "Read an endpoint (never its secret)" },
      },
    )
    .patch(
      "/api/endpoints/:id",
      async ({ accountId, params, body, by }) =>
        endpointView(await endpoints.updateEndpoint(endpointDeps, accountId, params.id, body, await by())),
      {
        params: idParams,
        body: s.updateEndpointBody,
        detail: { ...tag, summary: "Change an endpoint's url, fields or phone_number_id" },
      },
    )
    .delete(
      "/api/endpoints/:id",
      async ({ accountId, params, by, set }) => {
        await endpoints.deleteEndpoint(endpointDeps, accountId, params.id, await by());
        set.status = 204;
      },
      { params: idParams, detail: { ...tag, summary: "Delete an endpoint with its deliveries" } },
    )
    .post(
      "/api/endpoints/:id/enable",
      async ({ accountId, params, by }) =>
        endpointView(await endpoints.enableEndpoint(endpointDeps, accountId, params.id, await by())),
      {
        params: idParams,
        detail: { ...tag, summary: "Enable a disabled endpoint; resets its failure count" },
      },
    )
    .post(
      "/api/endpoints/:id/rotate-secret",
      async ({ accountId, params, by }) => {
        const { secret } = await endpoints.rotateSecret(endpointDeps, accountId, params.id, await by());
        return { secret };
      },
      {
        params: idParams,
        detail: { ...tag, summary: "New signing secret, shown once; the old one also signs for 24 hours" },
      },
    )
    .post(
      "/api/endpoints/:id/recover",
      async ({ accountId, params, body, by, set }) => {
        const recovery = await startRecover({ ...deps, ...endpointDeps }, accountId, params.id, body.since, await by());
        set.status = 202;
        return recoveryView(recovery);
      },
      {
        params: idParams,
        body: t.Object({ since: t.String({ maxLength: 40 }) }),
        detail: {
          ...tag,
          summary:
            "Bulk recover: replay every parked delivery of this endpoint created since `since` (ISO 8601), in the background; payloads already gone and deliveries replayed before are skipped and counted; while one runs, asking again answers it (202)",
        },
      },
    )
    .get(
      "/api/endpoints/:id/recover",
      async ({ accountId, params }) => {
        const recovery = await latestRecover(deps, accountId, params.id);
        return recovery ? recoveryView(recovery) : null;
      },
      {
        params: idParams,
        detail: { ...tag, summary: "The endpoint's latest bulk recover and its progress (null when none ran)" },
      },
    )
    .post(
      "/api/endpoints/:id/test",
      async ({ accountId, params, body, set }) => {
        const deliveryId = await endpoints.sendTest(endpointDeps, accountId, params.id, body.field);
        set.status = 202;
        return { delivery_id: deliveryId };
      },
      {
        params: idParams,
        ...optionalBody(s.sendTestBody),
        detail: {
          ...tag,
          summary:
            "Send test: queue a proxy_test event with one change of `field` (default messages) to this endpoint, in its signature scheme's shape",
        },
      },
    )
    .post(
      "/api/endpoints/:id/verify",
      async ({ accountId, params }) => verifyEndpoint(endpointDeps, accountId, params.id),
      {
        params: idParams,
        detail: {
          ...tag,
          summary: "Verify: GET the URL with hub.mode, hub.verify_token and hub.challenge, as the platform does",
        },
      },
    )
    .get(
      "/api/endpoints/:id/stats",
      async ({ accountId, params, query }) => {
        const hours = query.hours ?? 24;
        return { hours, data: (await deliveries.endpointStats(deps, accountId, params.id, hours)).map(statsView) };
      },
      {
        params: idParams,
        query: s.statsQuery,
        detail: {
          ...tag,
          summary:
            "Hourly buckets (oldest first) of succeeded and failed attempts and of deliveries parked, for a chart; hours defaults to 24",
        },
      },
    )
    .get(
      "/api/deliveries",
      async ({ accountId, query }) => {
        const page = await deliveries.listDeliveries(deps, accountId, query);
        return {
          data: page.data.map((d) => ({
            ...deliveryView(d),
            about: page.about.get(d.eventId) ?? d.fields.join(" · "),
          })),
          next_cursor: page.nextCursor,
        };
      },
      {
        query: s.deliveryQuery,
        detail: {
          ...tag,
          summary:
            "List deliveries, newest first, each saying what its event is (about); filter by endpoint_id, status (pending, succeeded, parked), field, number, message_id, time (from, to: ISO 8601) and last attempt's status code (last_status); page with next_cursor",
        },
      },
    )
    .get(
      "/api/deliveries/:id",
      async ({ accountId, params }) => {
        const { delivery, attempts, payload } = await deliveries.getDelivery(deps, accountId, params.id);
        return { ...deliveryView(delivery), attempts: attempts.map(attemptView), payload };
      },
      {
        params: idParams,
        detail: {
          ...tag,
          summary: "A delivery with its attempts, next_attempt_at while pending, replay_of, and its payload while kept",
        },
      },
    )
    .post(
      "/api/deliveries/:id/replay",
      async ({ accountId, params, by, set }) => {
        const replay = await deliveries.replayDelivery(endpointDeps, accountId, params.id, await by());
        set.status = 201;
        return deliveryView(replay);
      },
      {
        params: idParams,
        detail: { ...tag, summary: "Replay into a new delivery (new id, replay_of set); 410 payload_expired" },
      },
    );
  return new Elysia().use(open).use(signedIn);
}
