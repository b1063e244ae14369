import { Elysia } from "elysia";
import { clearedCookie, readCookie, sessionCookie } from "../auth/session-routes.ts";
import { findSession, SESSION_COOKIE, signIn, signOut } from "../auth/session.ts";
import { checkOrigin } from "../http/browser-guard.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { formFields } from "./form.ts";
import { htmlResponse, safeNext, seeOther } from "./http.ts";
import { SignInPage, type SignInWords } from "./pages/sign-in.tsx";

const text = (body: unknown, key: string): string => {
  const value = formFields(body)[key];
  return typeof value === "string" ? value : "";
};

/**
 * Whose sign-in form it is: the dashboard's (account users) or the operator console's. Each has
 * its own pages, cookie and sessions; the form and its rules are the same.
 */
export interface SignInDoor {
  /** The pages' root: sign-in goes back under it, and to it by default. */
  home: string;
  words: SignInWords;
  cookie: string;
  /** Checks the password (throttled) and opens a session; the cookie's value. */
  signIn(email: string, password: string): Promise<string>;
  isSignedIn(token: string | undefined): Promise<boolean>;
  signOut(token: string | undefined): Promise<void>;
}

/** The dashboard's door: account users, over the same session functions as POST/DELETE /api/session. */
export function dashboardDoor(deps: Deps): SignInDoor {
  return {
    home: "/dashboard",
    words: {
      action: "/dashboard/sign-in",
      heading: "Sign in to Switchboard",
      footnote: "Logins are created by the people who run this service.",
    },
    cookie: SESSION_COOKIE,
    signIn: async (email, password) => (await signIn(deps, email, password)).token,
    isSignedIn: async (token) => (await findSession(deps, token)) !== null,
    signOut: (token) => signOut(deps, token),
  };
}

/** The sign-in form and sign-out button of a door, mounted under its home. */
export function signInRoutes(door: SignInDoor) {
  const tokenOf = (request: Request) => readCookie(request.headers.get("cookie"), door.cookie);
  return new Elysia()
    .get(
      "/sign-in",
      async ({ request, query }) => {
        const next = safeNext(query.next, door.home);
        if (await door.isSignedIn(tokenOf(request))) return seeOther(next);
        return htmlResponse(SignInPage({ next, signedOut: query.signed_out === "1", words: door.words }));
      },
      { detail: { hide: true } },
    )
    .post(
      "/sign-in",
      async ({ request, body }) => {
        const next = safeNext(text(body, "next"), door.home);
        const email = text(body, "email").trim().slice(0, 320);
        try {
          checkOrigin(request.method, request.headers.get("origin"), request.headers.get("host"));
          const token = await door.signIn(email, text(body, "password").slice(0, 200));
          return seeOther(next, { "set-cookie": sessionCookie(token, request, door.cookie) });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return htmlResponse(SignInPage({ next, email, error: error.message, words: door.words }), error.status);
        }
      },
      { detail: { hide: true } },
    )
    .post(
      "/sign-out",
      async ({ request }) => {
        try {
          checkOrigin(request.method, request.headers.get("origin"), request.headers.get("host"));
        } catch {
          return htmlResponse("Sign-out must come from these pages themselves.", 403);
        }
        await door.signOut(tokenOf(request));
        return seeOther(`${door.home}/sign-in?signed_out=1`, { "set-cookie": clearedCookie(door.cookie) });
      },
      { detail: { hide: true } },
    );
}
