import { Elysia } from "elysia";
import { accountAuditView, ACTION_KINDS, listAudit } from "../audit/queries.ts";
import type { Deps } from "../deps.ts";
import { utcField } from "../html/format.ts";
import { guarded, page } from "./guard.tsx";
import { filterOf, listOrNone } from "./list-query.ts";
import { ActivityPage, type ActivityFilter } from "./pages/activity.tsx";

/** The Activity page: the account's audit log, over audit/queries.ts as `GET /api/activity`. */
export function activityPages(deps: Deps) {
  return new Elysia().get(
    "/activity",
    guarded(deps, async ({ query }, viewer) => {
      const filter: ActivityFilter = filterOf(query, ["action", "actor", "from", "to"]);
      const result = await listOrNone(
        () =>
          listAudit(
            deps,
            { ...filter, from: utcField(filter.from), to: utcField(filter.to), cursor: query.cursor || undefined },
            viewer.accountId,
          ),
        { data: [], nextCursor: null },
      );
      return page(
        viewer,
        "Activity",
        "activity",
        ActivityPage({
          entries: result.data.map(accountAuditView),
          kinds: ACTION_KINDS,
          filter,
          nextCursor: result.nextCursor,
          firstPage: !query.cursor,
          now: deps.clock.now(),
        }),
      );
    }),
    { detail: { hide: true } },
  );
}
