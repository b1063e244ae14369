import { Elysia } from "elysia";
import { clearedCookie, sessionCookie, signInBody } from "../auth/session-routes.ts";
import type { Deps } from "../deps.ts";
import { OPERATOR_COOKIE, operatorSignIn, operatorSignOut, operatorToken } from "./session.ts";

/** POST/DELETE /operator/session (docs/operations.md#the-operator-console): the JSON twin of the console's sign-in form. */
export function operatorSessionRoutes(deps: Deps) {
  const detail = { tags: ["Operator console"] };
  return new Elysia()
    .post(
      "/operator/session",
      async ({ body, request, set }) => {
        const { token } = await operatorSignIn(deps, body.email, body.password);
        set.headers["set-cookie"] = sessionCookie(token, request, OPERATOR_COOKIE);
        set.status = 204;
      },
      {
        body: signInBody,
        detail: { ...detail, summary: "Operator sign-in; sets the operator console's session cookie" },
      },
    )
    .delete(
      "/operator/session",
      async ({ request, set }) => {
        await operatorSignOut(deps, operatorToken(request));
        set.headers["set-cookie"] = clearedCookie(OPERATOR_COOKIE);
        set.status = 204;
      },
      { detail: { ...detail, summary: "Operator sign-out" } },
    );
}
