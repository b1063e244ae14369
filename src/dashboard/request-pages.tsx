import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import { getRequest, listRequests, requestView, type RequestQuery } from "../requests/queries.ts";
import type { Deps } from "../deps.ts";
import { utcField } from "../html/format.ts";
import { guarded, page, pathId, type PageHandler, type Viewer } from "./guard.tsx";
import type { PageContext } from "../html/page-context.ts";
import { htmlResponse, seeOther } from "../html/http.ts";
import { filterOf, listOrNone } from "./list-query.ts";
import { RequestPage, RequestsPage, type RequestsFilter } from "./pages/requests.tsx";
import { MessagePage } from "./pages/message.tsx";
import { messageTimeline } from "../messages/timeline.ts";

/** The request log's filter as the query gives it, and the same in the words the query function takes. */
function requestFilter(query: PageContext["query"]): { filter: RequestsFilter; apiQuery: RequestQuery } {
  const filter: RequestsFilter = filterOf(query, ["number", "status", "error_code", "api_key_id", "from", "to"]);
  const apiQuery: RequestQuery = {
    number: filter.number,
    status: (["2xx", "4xx", "5xx"] as const).find((s) => s === filter.status),
    error_code: filter.error_code && /^\d{1,10}$/.test(filter.error_code) ? Number(filter.error_code) : undefined,
    api_key_id: filter.api_key_id,
    from: utcField(filter.from),
    to: utcField(filter.to),
    cursor: query.cursor || undefined,
  };
  return { filter, apiQuery };
}

async function listPage(
  deps: Deps,
  viewer: Viewer,
  query: PageContext["query"],
  notFound?: string,
  status = 200,
  messageNotFound?: string,
) {
  const { filter, apiQuery } = requestFilter(query);
  const result = await listOrNone(() => listRequests(deps, viewer.accountId, apiQuery), {
    data: [],
    nextCursor: null,
  });
  return htmlResponse(
    page(
      viewer,
      "Requests",
      "requests",
      RequestsPage({
        requests: result.data.map((r) => requestView(deps, r)),
        keys: deps.store.directory
          .apiKeys(viewer.accountId)
          .map((k) => ({ id: k.id, label: k.name ? `${k.name} (${k.prefix}…)` : `${k.prefix}…` })),
        numbers: deps.store.directory.numbers(viewer.accountId).map((n) => n.phoneNumberId),
        filter,
        nextCursor: result.nextCursor,
        firstPage: !query.cursor,
        now: deps.clock.now(),
        notFound,
        messageNotFound,
      }),
    ),
    status,
  );
}

/** An id as pasted: spaces and surrounding quotes dropped. */
const pastedId = (query: PageContext["query"]) => (query.id ?? "").trim().replace(/^["']|["']$/g, "");

const listRequestsPage =
  (deps: Deps): PageHandler =>
  ({ query }, viewer) =>
    listPage(deps, viewer, query);

const lookUpRequest =
  (deps: Deps): PageHandler =>
  async ({ query }, viewer) => {
    const id = pastedId(query);
    if (id && (await deps.store.requests.get(viewer.accountId, id)))
      return seeOther(`/dashboard/requests/${encodeURIComponent(id)}`);
    return listPage(deps, viewer, {}, id || " ");
  };

const showRequest =
  (deps: Deps): PageHandler =>
  async ({ params }, viewer) => {
    let record: Awaited<ReturnType<typeof getRequest>>;
    try {
      record = await getRequest(deps, viewer.accountId, pathId(params));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return listPage(deps, viewer, {}, pathId(params), 404);
    }
    return htmlResponse(
      page(
        viewer,
        `Request ${record.id}`,
        "requests",
        RequestPage({ request: requestView(deps, record), now: deps.clock.now() }),
      ),
    );
  };

const lookUpMessage: PageHandler = async ({ query }, _viewer) => {
  const id = pastedId(query);
  return id ? seeOther(`/dashboard/messages/${encodeURIComponent(id)}`) : seeOther("/dashboard/requests");
};

const showMessage =
  (deps: Deps): PageHandler =>
  async ({ params }, viewer) => {
    let timeline: Awaited<ReturnType<typeof messageTimeline>>;
    try {
      timeline = await messageTimeline(deps, viewer.accountId, pathId(params));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return listPage(deps, viewer, {}, undefined, 404, pathId(params));
    }
    const endpoints = await deps.store.endpoints.ofAccount(viewer.accountId);
    const endpointUrl = (id: string) => endpoints.find((e) => e.id === id)?.url ?? id;
    return htmlResponse(
      page(
        viewer,
        `Message ${timeline.message_id}`,
        "requests",
        MessagePage({ timeline, endpointUrl, now: deps.clock.now() }),
      ),
    );
  };

const detail = { hide: true };

/** The Requests pages: the account's request log and one call, over requests/queries.ts. */
export function requestPages(deps: Deps) {
  return new Elysia()
    .get("/requests", guarded(deps, listRequestsPage(deps)), { detail })
    .get("/requests/lookup", guarded(deps, lookUpRequest(deps)), { detail })
    .get("/requests/:id", guarded(deps, showRequest(deps)), { detail })
    .get("/messages/lookup", guarded(deps, lookUpMessage), { detail })
    .get("/messages/:id", guarded(deps, showMessage(deps)), { detail });
}
