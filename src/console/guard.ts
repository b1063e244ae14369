import { byOperator, type AuditContext } from "../audit/entry.ts";
import type { PageContext } from "../html/page-context.ts";
import { htmlResponse, isHtmx, seeOther } from "../html/http.ts";
import { AppError } from "../errors/catalog.ts";
import { clientIp, type Arrived } from "../http/client-ip.ts";
import { findOperator, operatorToken } from "../operators/session.ts";
import type { Deps } from "../deps.ts";
import type { Operator } from "../store/operators.ts";
import { consoleErrorPage } from "./layout.tsx";

/** A console page's handler: `by` is who makes the changes the page posts (the operator, from the request's address), for the audit log. */
export type ConsoleHandler = (
  ctx: PageContext,
  operator: Operator,
  by: AuditContext,
) => Promise<Response | string> | Response | string;

/** Where a visitor without an operator session is sent: the console's sign-in, coming back here afterwards. */
function signInLocation(request: Request): string {
  const url = new URL(request.url);
  const back = request.method === "GET" ? url.pathname + url.search : "/operator";
  return `/operator/sign-in?next=${encodeURIComponent(back)}`;
}

/**
 * Wraps a console page: requires a live operator session (an account user's cookie is not one:
 * the browser is sent to sign in; htmx gets an HX-Redirect), and turns our errors into a page.
 * Origin and body type were checked before routing (browserApiGuard for /operator, app.ts).
 */
export function operatorOnly(deps: Deps, handler: ConsoleHandler) {
  return async (ctx: PageContext): Promise<Response> => {
    const { request } = ctx;
    let operator: Operator | null = null;
    try {
      operator = await findOperator(deps, operatorToken(request));
      if (!operator) {
        const location = signInLocation(request);
        return isHtmx(request) ? htmlResponse("", 401, { "hx-redirect": location }) : seeOther(location);
      }
      const result = await handler(
        ctx,
        operator,
        byOperator(operator, clientIp(deps.config.trustedProxies, ctx.server, (ctx as Arrived).arrived)),
      );
      return typeof result === "string" ? htmlResponse(result) : result;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return consoleErrorPage(error, operator, isHtmx(request));
    }
  };
}
