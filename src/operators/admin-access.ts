import { byAdminToken, byOperator, type AuditContext } from "../audit/entry.ts";
import { checkAdminToken } from "../auth/admin-guard.ts";
import { AppError } from "../errors/catalog.ts";
import { checkBrowserCall } from "../http/browser-guard.ts";
import type { Deps } from "../deps.ts";
import { findOperator, operatorToken } from "./session.ts";

/**
 * The operator API's door, and who comes through it for the audit log. A request with an
 * Authorization header is a script's: ADMIN_TOKEN, as before (with no ADMIN_TOKEN set, 404: the
 * API is off for scripts). One without it but with the operator console's cookie is a browser's:
 * the cookie must be a live operator session, and the request must pass the same CSRF rules as the
 * dashboard API's (same Origin, JSON bodies only). `ip`: the address the request came from.
 */
export async function adminAccess(
  deps: Pick<Deps, "config" | "store" | "clock" | "random">,
  request: Request,
  ip: string | null,
): Promise<AuditContext> {
  const authorization = request.headers.get("authorization");
  const token = operatorToken(request);
  if (authorization !== null || token === undefined) {
    checkAdminToken(deps.config.adminToken, authorization);
    return byAdminToken(ip);
  }
  checkBrowserCall(request);
  const operator = await findOperator(deps, token);
  if (!operator) throw new AppError("unauthorized", "Sign in to the operator console first.");
  return byOperator(operator, ip);
}
