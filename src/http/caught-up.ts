import { Elysia } from "elysia";
import type { Store } from "../store/store.ts";
import { routeGroup } from "./request-context.ts";

/**
 * The operator API and console, the dashboard and its API first catch up with the directory changes other
 * instances (or the CLI) committed: the scale-out mode (docs/operations.md#scale-out) lets a change take a second to
 * reach every instance, but a script that creates a WABA through one instance behind a load balancer and then
 * its number through another must find the WABA. It costs one small query when nothing changed
 * (SQLite: a pragma), and these calls are not the proxy's hot path.
 */
export function caughtUpDirectory(deps: { store: Store }) {
  return new Elysia({ name: "caught-up-directory" }).onRequest(async ({ request }) => {
    const group = routeGroup(new URL(request.url).pathname);
    if (group === "admin" || group === "api" || group === "dashboard" || group === "operator")
      await deps.store.directory.refresh();
  });
}
