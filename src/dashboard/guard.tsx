import { byUser, type AuditContext } from "../audit/entry.ts";
import { sessionToken } from "../auth/session-routes.ts";
import { findSession } from "../auth/session.ts";
import { checkOrigin } from "../http/browser-guard.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import type { Account } from "../store/types.ts";
import { errorPage } from "../html/error-page.tsx";
import type { PageContext } from "../html/page-context.ts";
import { htmlResponse, isHtmx, seeOther } from "../html/http.ts";
import { Layout, type SectionKey } from "./layout.tsx";

/** Who is looking at a page. Every read a page makes is scoped to `accountId`. */
export interface Viewer {
  accountId: string;
  account: Account;
  userId: string;
  userEmail: string;
  /** Who makes the changes the page posts, for the audit log. */
  by: AuditContext;
}

/** The `:id` of the page's path; a handler that reads it on a path without one is a fault, said plainly. */
export function pathId(params: Record<string, string>): string {
  const id = params.id;
  if (id === undefined) throw new Error("a page reads :id on a path that has none");
  return id;
}

export type PageHandler = (ctx: PageContext, viewer: Viewer) => Promise<Response | string> | Response | string;

/** Where an anonymous visitor is sent: the sign-in page, coming back here afterwards. */
function signInLocation(request: Request): string {
  const url = new URL(request.url);
  const back = request.method === "GET" ? url.pathname + url.search : "/dashboard";
  return `/dashboard/sign-in?next=${encodeURIComponent(back)}`;
}

/** The signed-in user of a live session, with their account; null when any of the three is gone. */
async function viewerOf(deps: Deps, ctx: PageContext): Promise<Viewer | null> {
  const session = await findSession(deps, sessionToken(ctx.request));
  const account = session ? deps.store.directory.account(session.accountId) : undefined;
  const user = session ? await deps.store.users.byId(session.userId) : undefined;
  if (!session || !account || !user) return null;
  return {
    accountId: account.id,
    account,
    userId: user.id,
    userEmail: user.email,
    by: byUser(user, clientIp(deps.config.trustedProxies, ctx.server, (ctx as Arrived).arrived)),
  };
}

/**
 * Wraps a page handler: checks Origin on posts, requires a live session (else sends the browser
 * to sign in; htmx gets an HX-Redirect), and turns our errors into an HTML page in place of the
 * API's JSON envelope.
 */
export function guarded(deps: Deps, handler: PageHandler) {
  return async (ctx: PageContext): Promise<Response> => {
    const { request } = ctx;
    let viewer: Viewer | null = null;
    try {
      checkOrigin(request);
      viewer = await viewerOf(deps, ctx);
      if (!viewer) {
        const location = signInLocation(request);
        return isHtmx(request) ? htmlResponse("", 401, { "hx-redirect": location }) : seeOther(location);
      }
      const result = await handler(ctx, viewer);
      return typeof result === "string" ? htmlResponse(result) : result;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const shown = viewer;
      return errorPage(error, isHtmx(request), {
        frame: shown ? (title, content) => page(shown, title, null, content) : null,
        back: { href: "/dashboard", text: "Back to the dashboard" },
        signIn: "/dashboard/sign-in",
      });
    }
  };
}

/** Renders a page for the viewer inside the dashboard's frame. */
export function page(viewer: Viewer, title: string, section: SectionKey | null, content: JSX.Element): string {
  return (
    <Layout title={title} section={section} accountName={viewer.account.name} userEmail={viewer.userEmail}>
      {content}
    </Layout>
  ) as string;
}
