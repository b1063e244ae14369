import { timingSafeEqual, createHash } from "node:crypto";
import { AppError } from "../errors/catalog.ts";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Checks `Authorization: Bearer <ADMIN_TOKEN>` in constant time; with no ADMIN_TOKEN the operator API is off. */
export function checkAdminToken(adminToken: string | null, authorization: string | null): void {
  if (adminToken === null) throw new AppError("not_found", "The operator API is off: set ADMIN_TOKEN to turn it on.");
  const given = authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : "";
  // Comparing digests keeps the comparison constant-time whatever the lengths.
  if (!timingSafeEqual(digest(given), digest(adminToken))) throw new AppError("unauthorized", "Missing or wrong admin token.");
}
