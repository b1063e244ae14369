import { AppError } from "../errors/catalog.ts";

/** An ISO 8601 time (or epoch ms) of a query parameter, or 400 naming it. */
export function timeParam(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) throw new AppError("invalid_request", `${name} must be an ISO 8601 time such as 2026-11-24T10:00:00Z.`);
  return ms;
}
