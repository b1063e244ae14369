import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";
import { getRequest, listRequests, requestView, type RequestQuery } from "../requests/queries.ts";
import type { Deps } from "../deps.ts";
import { utcField } from "../html/format.ts";
import { guarded, page, pathId, type Viewer } from "./guard.tsx";
import { htmlResponse, seeOther } from "../html/http.ts";
import { filterOf, listOrNone } from "./list-query.ts";
import { RequestPage, RequestsPage, type RequestsFilter } from "./pages/requests.tsx";
import { MessagePage } from "./pages/message.tsx";
import { messageTimeline } from "../messages/timeline.ts";

/** The Requests pages: the account's request log and one call, over requests/queries.ts. */
export function requestPages(deps: Deps) {
  const listPage = async (
    viewer: Viewer,
    query: Record<string, string | undefined>,
    notFound?: string,
    status = 200,
    messageNotFound?: string,
  ) => {
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
  };

  return new Elysia()
    .get(
      "/requests",
      guarded(deps, ({ query }, viewer) => listPage(viewer, query)),
      { detail: { hide: true } },
    )
    .get(
      "/requests/lookup",
      guarded(deps, async ({ query }, viewer) => {
        const id = (query.id ?? "").trim().replace(/^["']|["']$/g, "");
        if (id && (await deps.store.requests.get(viewer.accountId, id)))
          return seeOther(`/dashboard/requests/${encodeURIComponent(id)}`);
        return listPage(viewer, {}, id || " ");
      }),
      { detail: { hide: true } },
    )
    .get(
      "/requests/:id",
      guarded(deps, async ({ params }, viewer) => {
        let record: Awaited<ReturnType<typeof getRequest>>;
        try {
          record = await getRequest(deps, viewer.accountId, pathId(params));
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return listPage(viewer, {}, pathId(params), 404);
        }
        return htmlResponse(
          page(
            viewer,
            `Request ${record.id}`,
            "requests",
            RequestPage({ request: requestView(deps, record), now: deps.clock.now() }),
          ),
        );
      }),
      { detail: { hide: true } },
    )
    .get(
      "/messages/lookup",
      guarded(deps, async ({ query }, _viewer) => {
        const id = (query.id ?? "").trim().replace(/^["']|["']$/g, "");
        return id ? seeOther(`/dashboard/messages/${encodeURIComponent(id)}`) : seeOther("/dashboard/requests");
      }),
      { detail: { hide: true } },
    )
    .get(
      "/messages/:id",
      guarded(deps, async ({ params }, viewer) => {
        let timeline: Awaited<ReturnType<typeof messageTimeline>>;
        try {
          timeline = await messageTimeline(deps, viewer.accountId, pathId(params));
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return listPage(viewer, {}, undefined, 404, pathId(params));
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
      }),
      { detail: { hide: true } },
    );
}
