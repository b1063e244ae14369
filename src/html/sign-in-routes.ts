import { Elysia } from "elysia";
import { clearedCookie, readCookie, sessionCookie } from "../auth/session-routes.ts";
import { checkOrigin } from "../http/browser-guard.ts";
import { clientIp, type Arrived, type TrustedProxies } from "../http/client-ip.ts";
import { AppError } from "../errors/catalog.ts";
import { formFields } from "./form.ts";
import { htmlResponse, safeNext, seeOther } from "./http.ts";
import { SignInPage, type SignInWords } from "./sign-in-page.tsx";

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
  /** Checks the password (throttled) and opens a session, both recorded with `ip`; the cookie's value. */
  signIn(email: string, password: string, ip: string | null): Promise<string>;
  isSignedIn(token: string | undefined): Promise<boolean>;
  signOut(token: string | undefined, ip: string | null): Promise<void>;
}

/** The sign-in form and sign-out button of a door, mounted under its home; `proxies`: TRUSTED_PROXIES. */
export function signInRoutes(door: SignInDoor, proxies: TrustedProxies) {
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
      async (context) => {
        const next = safeNext(text(context.body, "next"), door.home);
        const email = text(context.body, "email").trim().slice(0, 320);
        try {
          checkOrigin(context.request);
          const ip = clientIp(proxies, context.server, (context as Arrived).arrived);
          const token = await door.signIn(email, text(context.body, "password").slice(0, 200), ip);
          return seeOther(next, { "set-cookie": sessionCookie(token, context.request, door.cookie) });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const page = SignInPage({ next, email, error: error.message, words: door.words });
          return htmlResponse(page, error.status, error.headers);
        }
      },
      { detail: { hide: true } },
    )
    .post(
      "/sign-out",
      async (context) => {
        try {
          checkOrigin(context.request);
        } catch {
          return htmlResponse("Sign-out must come from these pages themselves.", 403);
        }
        await door.signOut(tokenOf(context.request), clientIp(proxies, context.server, (context as Arrived).arrived));
        return seeOther(`${door.home}/sign-in?signed_out=1`, { "set-cookie": clearedCookie(door.cookie) });
      },
      { detail: { hide: true } },
    );
}
