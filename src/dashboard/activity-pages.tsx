import { Elysia } from "elysia";
import { ACTION_KINDS, auditView, listAudit } from "../audit/queries.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { utcField } from "./format.ts";
import { guarded, page } from "./guard.tsx";
import { ActivityPage, type ActivityFilter } from "./pages/activity.tsx";

/** The Activity page: the account's audit log, over audit/queries.ts as `GET /api/activity`. */
export function activityPages(deps: Deps) {
  return new Elysia().get(
    "/activity",
    guarded(deps, async ({ query }, viewer) => {
      const filter: ActivityFilter = {
        action: query.action || undefined,
        actor: query.actor || undefined,
        from: query.from || undefined,
        to: query.to || undefined,
      };
      let result: Awaited<ReturnType<typeof listAudit>>;
      try {
        result = await listAudit(
          deps,
          { ...filter, from: utcField(filter.from), to: utcField(filter.to), cursor: query.cursor || undefined },
          viewer.accountId,
        );
      } catch (error) {
        // What the page's own fields send is always valid; a hand-made filter that is not shows nothing.
        if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
        result = { data: [], nextCursor: null };
      }
      return page(
        viewer,
        "Activity",
        "activity",
        ActivityPage({
          entries: result.data.map(auditView),
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
