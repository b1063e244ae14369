import { Elysia } from "elysia";
import { requireSession } from "../auth/session-routes.ts";
import type { Deps } from "../deps.ts";
import { accountAuditView, activityQuery, listAudit } from "../audit/queries.ts";

/** An account's own audit log (`GET /api/activity`, docs/operations.md#audit-log): thin over src/audit/queries.ts. */
export function activityRoutes(deps: Deps) {
  return new Elysia({ prefix: "/api" }).use(requireSession(deps)).get(
    "/activity",
    async ({ accountId, query }) => {
      const page = await listAudit(deps, query, accountId);
      return { data: page.data.map(accountAuditView), next_cursor: page.nextCursor };
    },
    {
      query: activityQuery,
      detail: {
        tags: ["Dashboard API"],
        summary:
          "The account's audit log, newest first: who changed what (keys, endpoints, numbers, settings, sign-ins…; an operator's change as `actor: {kind: \"operator\"}` with no id, email or address), when, from which address, and the fields before → after (never a secret); filter by action, actor and time; page with next_cursor",
      },
    },
  );
}
