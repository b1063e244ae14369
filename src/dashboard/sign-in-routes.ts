import { Elysia } from "elysia";
import { clearedSessionCookie, sessionCookie, sessionToken } from "../auth/session-routes.ts";
import { findSession, signIn, signOut } from "../auth/session.ts";
import { checkOrigin } from "../http/browser-guard.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { formFields } from "./form.ts";
import { htmlResponse, safeNext, seeOther } from "./http.ts";
import { SignInPage } from "./pages/sign-in.tsx";

const text = (body: unknown, key: string): string => {
  const value = formFields(body)[key];
  return typeof value === "string" ? value : "";
};

/** The sign-in form and sign-out button, over the same session functions as POST/DELETE /api/session. */
export function signInRoutes(deps: Deps) {
  return new Elysia()
    .get(
      "/sign-in",
      async ({ request, query }) => {
        const next = safeNext(query.next);
        if (await findSession(deps, sessionToken(request))) return seeOther(next);
        return htmlResponse(SignInPage({ next, signedOut: query.signed_out === "1" }));
      },
      { detail: { hide: true } },
    )
    .post(
      "/sign-in",
      async (context) => {
        const next = safeNext(text(context.body, "next"));
        const email = text(context.body, "email").trim().slice(0, 320);
        const { method, headers } = context.request;
        try {
          checkOrigin(method, headers.get("origin"), headers.get("host"));
          const ip = clientIp(context.server, (context as Arrived).arrived);
          const { token } = await signIn(deps, email, text(context.body, "password").slice(0, 200), ip);
          return seeOther(next, { "set-cookie": sessionCookie(token, context.request) });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return htmlResponse(SignInPage({ next, email, error: error.message }), error.status);
        }
      },
      { detail: { hide: true } },
    )
    .post(
      "/sign-out",
      async (context) => {
        const { method, headers } = context.request;
        try {
          checkOrigin(method, headers.get("origin"), headers.get("host"));
        } catch {
          return htmlResponse("Sign-out must come from the dashboard itself.", 403);
        }
        await signOut(deps, sessionToken(context.request), clientIp(context.server, (context as Arrived).arrived));
        return seeOther("/dashboard/sign-in?signed_out=1", { "set-cookie": clearedSessionCookie });
      },
      { detail: { hide: true } },
    );
}
