import { constantTimeEqual } from "../crypto/constant-time.ts";
import { AppError } from "../errors/catalog.ts";

/** Checks `Authorization: Bearer <ADMIN_TOKEN>` in constant time; with no ADMIN_TOKEN the operator API is off. */
export function checkAdminToken(adminToken: string | null, authorization: string | null): void {
  if (adminToken === null) throw new AppError("not_found", "The operator API is off: set ADMIN_TOKEN to turn it on.");
  const given = authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : "";
  if (!constantTimeEqual(given, adminToken)) throw new AppError("unauthorized", "Missing or wrong admin token.");
}
