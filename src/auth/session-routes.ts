import { Elysia, t } from "elysia";
import { byUser, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { findSession, SESSION_COOKIE, signIn, signOut } from "./session.ts";
import { SESSION_TTL_MS } from "./sign-in.ts";

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

/** The session cookie value a request carries, if any. */
export const sessionToken = (request: Request) => readCookie(request.headers.get("cookie"), SESSION_COOKIE);

const isHttps = (request: Request) =>
  request.url.startsWith("https:") || request.headers.get("x-forwarded-proto") === "https";

/**
 * Set-Cookie for a new session: HttpOnly, SameSite=Strict, and Secure whenever the request came
 * over https. `name`: the operator console's cookie is another one (src/operators/session.ts).
 */
export function sessionCookie(token: string, request: Request, name = SESSION_COOKIE): string {
  const secure = isHttps(request) ? "; Secure" : "";
  return `${name}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}${secure}`;
}

export const clearedCookie = (name: string) => `${name}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;

export const clearedSessionCookie = clearedCookie(SESSION_COOKIE);

/** What a sign-in posts (the dashboard's and the operator console's). */
export const signInBody = t.Object({ email: t.String({ maxLength: 320 }), password: t.String({ maxLength: 200 }) });

/** POST/DELETE /api/session (docs/operations.md#the-dashboard-and-its-api); every /api call's Origin and body type are checked by browserApiGuard (app.ts). */
export function sessionRoutes(deps: Deps) {
  return new Elysia()
    .post(
      "/api/session",
      async (context) => {
        const { email, password } = context.body;
        const ip = clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived);
        const { token } = await signIn(deps, email, password, ip);
        context.set.headers["set-cookie"] = sessionCookie(token, context.request);
        context.set.status = 204;
      },
      {
        body: signInBody,
        detail: { tags: ["Dashboard API"], summary: "Sign in; sets the session cookie" },
      },
    )
    .delete(
      "/api/session",
      async (context) => {
        await signOut(
          deps,
          sessionToken(context.request),
          clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived),
        );
        context.set.headers["set-cookie"] = clearedSessionCookie;
        context.set.status = 204;
      },
      { detail: { tags: ["Dashboard API"], summary: "Sign out" } },
    );
}

/**
 * For dashboard API routes: resolves the session cookie to `accountId`, or answers 401.
 * Every /api route except sign-in and the field list goes through this. `by()` is who is asking,
 * for the audit log of a change (the user is read only by the routes that make one).
 */
export function requireSession(deps: Deps) {
  return new Elysia({ name: "require-session" }).resolve({ as: "scoped" }, async (context) => {
    const session = await findSession(deps, sessionToken(context.request));
    const ip = clientIp(deps.config.trustedProxies, context.server, (context as Arrived).arrived);
    if (!session) throw new AppError("unauthorized", "Sign in first.");
    const by = async (): Promise<AuditContext> => {
      const user = await deps.store.users.byId(session.userId);
      if (!user) throw new AppError("unauthorized", "Sign in first.");
      return byUser(user, ip);
    };
    return { accountId: session.accountId, userId: session.userId, by };
  });
}
