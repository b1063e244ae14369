import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import type { DeliveryStatus } from "../store/history.ts";
import * as deliveries from "../webhooks/deliveries.ts";
import type { RelayHandle } from "../webhooks/relay.ts";
import { attemptView, deliveryView, endpointView } from "../webhooks/views.ts";
import { Notice } from "../html/components.tsx";
import { utcField } from "../html/format.ts";
import { guarded, page, pathId, type PageHandler, type Viewer } from "./guard.tsx";
import type { PageContext } from "../html/page-context.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import { filterOf, listOrNone } from "./list-query.ts";
import { DeliveriesPage } from "./pages/deliveries.tsx";
import { DeliveryPage, TestResult } from "./pages/delivery.tsx";

/** Rows per page of the deliveries list. */
const PAGE_SIZE = 25;

/** How a test delivery went so far, as the endpoint page's Send test shows it (htmx swaps it in). */
export async function testResult(deps: Deps, viewer: Viewer, id: string) {
  const { delivery, attempts } = await deliveries.getDelivery(deps, viewer.accountId, id);
  return htmlResponse(
    TestResult({
      delivery: deliveryView(delivery),
      attempts: attempts.map(attemptView),
      now: deps.clock.now(),
    }) as string,
  );
}

async function deliveryPage(deps: Deps, viewer: Viewer, id: string, flash?: JSX.Element, status = 200) {
  const { delivery, attempts, payload } = await deliveries.getDelivery(deps, viewer.accountId, id);
  const endpoint = await deps.store.endpoints.get(delivery.endpointId);
  return htmlResponse(
    page(
      viewer,
      "Delivery",
      "deliveries",
      DeliveryPage({
        delivery: deliveryView(delivery),
        attempts: attempts.map(attemptView),
        payload,
        endpoint: endpoint ? endpointView(endpoint) : null,
        now: deps.clock.now(),
        flash,
      }),
    ),
    status,
  );
}

/** The list's filter as the query gives it, with the values the list cannot use left out. */
function deliveryFilter(query: PageContext["query"]) {
  const wanted = query.status;
  const status: DeliveryStatus | undefined =
    wanted === "pending" || wanted === "succeeded" || wanted === "parked" ? wanted : undefined;
  return {
    ...filterOf(query, ["endpoint_id", "status", "cursor", "field", "number", "message_id", "from", "to"]),
    status,
    last_status: query.last_status && /^[1-5]\d\d$/.test(query.last_status) ? query.last_status : undefined,
  };
}

const listDeliveries =
  (deps: Deps): PageHandler =>
  async ({ query }, viewer) => {
    const filter = deliveryFilter(query);
    const result = await listOrNone(
      () =>
        deliveries.listDeliveries(deps, viewer.accountId, {
          ...filter,
          from: utcField(filter.from),
          to: utcField(filter.to),
          last_status: filter.last_status === undefined ? undefined : Number(filter.last_status),
          limit: PAGE_SIZE,
        }),
      { data: [], nextCursor: null, about: new Map<string, string>() },
    );
    return page(
      viewer,
      "Deliveries",
      "deliveries",
      DeliveriesPage({
        deliveries: result.data.map((d) => ({
          ...deliveryView(d),
          about: result.about.get(d.eventId) ?? d.fields.join(" · "),
        })),
        numbers: deps.store.directory.numbers(viewer.accountId).map((n) => n.phoneNumberId),
        endpoints: (await deps.store.endpoints.ofAccount(viewer.accountId)).map(endpointView),
        filter,
        nextCursor: result.nextCursor,
        firstPage: !filter.cursor,
        now: deps.clock.now(),
      }),
    );
  };

const showDelivery =
  (deps: Deps): PageHandler =>
  ({ params, query }, viewer) => {
    const flash =
      query.done === "replayed" && query.from ? (
        <Notice tone="ok">
          <p>
            Replayed as this new delivery (replay of{" "}
            <span class="mono" safe>
              {query.from}
            </span>
            ).
          </p>
        </Notice>
      ) : undefined;
    return deliveryPage(deps, viewer, pathId(params), flash);
  };

const showTestResult =
  (deps: Deps): PageHandler =>
  ({ params }, viewer) =>
    testResult(deps, viewer, pathId(params));

const replayDelivery =
  (deps: ReplayDeps): PageHandler =>
  async ({ params }, viewer) => {
    const id = pathId(params);
    try {
      const replay = await deliveries.replayDelivery(deps, viewer.accountId, id, viewer.by);
      return seeOther(
        `/dashboard/deliveries/${encodeURIComponent(replay.id)}?done=replayed&from=${encodeURIComponent(id)}`,
      );
    } catch (error) {
      if (!(error instanceof AppError) || error.errorName === "not_found") throw error;
      const words =
        error.errorName === "payload_expired"
          ? "This delivery cannot be replayed: its payload has been deleted (410 payload_expired). History payloads are deleted as soon as they are delivered or parked."
          : error.message;
      return deliveryPage(
        deps,
        viewer,
        id,
        <Notice tone="bad">
          <p safe>{words}</p>
        </Notice>,
        error.status,
      );
    }
  };

type ReplayDeps = Deps & { urlRules: RelayHandle["urlRules"]; queue: RelayHandle["dispatcher"] };

const detail = { hide: true };

/** Delivery pages: thin handlers over the relay's own plain functions (webhooks/deliveries.ts) and its views. */
export function deliveryPages(deps: Deps, relay: RelayHandle) {
  const replayDeps: ReplayDeps = { ...deps, urlRules: relay.urlRules, queue: relay.dispatcher };
  return new Elysia()
    .get("/deliveries", guarded(deps, listDeliveries(deps)), { detail })
    .get("/deliveries/:id", guarded(deps, showDelivery(deps)), { detail })
    .get("/deliveries/:id/result", guarded(deps, showTestResult(deps)), { detail })
    .post("/deliveries/:id/replay", guarded(deps, replayDelivery(replayDeps)), { detail });
}
