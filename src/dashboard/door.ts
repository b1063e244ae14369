import { findSession, SESSION_COOKIE, signIn, signOut } from "../auth/session.ts";
import type { Deps } from "../deps.ts";
import type { SignInDoor } from "../html/sign-in-routes.ts";

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
    signIn: async (email, password, ip) => (await signIn(deps, email, password, ip)).token,
    isSignedIn: async (token) => (await findSession(deps, token)) !== null,
    signOut: (token, ip) => signOut(deps, token, ip),
  };
}
