import { Elysia, t } from "elysia";
import { requireSession } from "../auth/session-routes.ts";
import type { Deps } from "../deps.ts";
import { getRequest, listRequests, requestQuery, requestView } from "./queries.ts";

/** The account's request log (issue 19): thin routes over queries.ts. */
export function requestRoutes(deps: Deps) {
  const tag = { tags: ["Dashboard API"] };
  return new Elysia({ prefix: "/api" })
    .use(requireSession(deps))
    .get(
      "/requests",
      async ({ accountId, query }) => {
        const page = await listRequests(deps, accountId, query);
        return { data: page.data.map((r) => requestView(deps, r)), next_cursor: page.nextCursor };
      },
      {
        query: requestQuery,
        detail: {
          ...tag,
          summary:
            "The account's proxied calls, newest first; filter by number, status class (2xx, 4xx, 5xx), error code (ours or upstream's), API key and time; page with next_cursor",
        },
      },
    )
    .get(
      "/requests/:id",
      async ({ accountId, params }) => requestView(deps, await getRequest(deps, accountId, params.id)),
      {
        params: t.Object({ id: t.String({ maxLength: 200 }) }),
        detail: {
          ...tag,
          summary:
            "One proxied call by its request id (X-Proxy-Request-Id, trace_id), with what its error means and what to do",
        },
      },
    );
}
