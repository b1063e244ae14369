import { Elysia } from "elysia";
import { clearedCookie, sessionCookie, signInBody } from "../auth/session-routes.ts";
import type { Deps } from "../deps.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { OPERATOR_COOKIE, operatorSignIn, operatorSignOut, operatorToken } from "./session.ts";

/** POST/DELETE /operator/session (docs/operations.md#the-operator-console): the JSON twin of the console's sign-in form. */
export function operatorSessionRoutes(deps: Deps) {
  const detail = { tags: ["Operator console"] };
  return new Elysia()
    .post(
      "/operator/session",
      async (context) => {
        const { email, password } = context.body;
        const ip = clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived);
        const { token } = await operatorSignIn(deps, email, password, ip);
        context.set.headers["set-cookie"] = sessionCookie(token, context.request, OPERATOR_COOKIE);
        context.set.status = 204;
      },
      {
        body: signInBody,
        detail: { ...detail, summary: "Operator sign-in; sets the operator console's session cookie" },
      },
    )
    .delete(
      "/operator/session",
      async (context) => {
        const ip = clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived);
        await operatorSignOut(deps, operatorToken(context.request), ip);
        context.set.headers["set-cookie"] = clearedCookie(OPERATOR_COOKIE);
        context.set.status = 204;
      },
      { detail: { ...detail, summary: "Operator sign-out" } },
    );
}
