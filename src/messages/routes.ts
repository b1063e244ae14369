import { Elysia, t } from "elysia";
import { requireSession } from "../auth/session-routes.ts";
import type { Deps } from "../deps.ts";
import { messageTimeline } from "./timeline.ts";

/** A message's timeline by its id (`wamid…`): thin route over timeline.ts. */
export function messageRoutes(deps: Deps) {
  return new Elysia({ prefix: "/api" })
    .use(requireSession(deps))
    .get("/messages/:message_id", ({ accountId, params }) => messageTimeline(deps, accountId, params.message_id), {
      params: t.Object({ message_id: t.String({ maxLength: 300 }) }),
      detail: {
        tags: ["Dashboard API"],
        summary:
          "A message's timeline by its id (wamid…): the proxied call that sent it, and every status webhook for it (sent, delivered, read, failed) with each delivery to each endpoint and its attempts",
      },
    });
}
