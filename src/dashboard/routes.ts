import { Elysia } from "elysia";
import type { Deps } from "../deps.ts";
import { accountPages } from "./account-pages.tsx";
import { activityPages } from "./activity-pages.tsx";
import { assetRoutes } from "../html/assets/routes.ts";
import { deliveryPages } from "./delivery-pages.tsx";
import { endpointPages } from "./endpoint-pages.tsx";
import { guarded, page } from "./guard.tsx";
import { htmlResponse, seeOther } from "../html/http.ts";
import { NotFound } from "../html/not-found.tsx";
import { onboardingPages } from "./onboarding-pages.tsx";
import { requestPages } from "./request-pages.tsx";
import { signInRoutes } from "../html/sign-in-routes.ts";
import { dashboardDoor } from "./door.ts";
import type { RelayHandle } from "../webhooks/relay.ts";

/** The web dashboard at /dashboard: server-rendered pages over the dashboard API's plain functions. */
export function dashboardRoutes(deps: Deps, relay: RelayHandle) {
  return new Elysia({ prefix: "/dashboard" })
    .use(assetRoutes())
    .use(signInRoutes(dashboardDoor(deps), deps.config.trustedProxies))
    .get("", () => seeOther("/dashboard/endpoints"), { detail: { hide: true } })
    .get("/", () => seeOther("/dashboard/endpoints"), { detail: { hide: true } })
    .use(endpointPages(deps, relay))
    .use(deliveryPages(deps, relay))
    .use(accountPages(deps, relay))
    .use(onboardingPages(deps, relay))
    .use(requestPages(deps))
    .use(activityPages(deps))
    .get(
      "/*",
      guarded(deps, (_ctx, viewer) => htmlResponse(page(viewer, "Not found", null, NotFound()), 404)),
      { detail: { hide: true } },
    );
}
