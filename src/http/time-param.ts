import { AppError } from "../errors/catalog.ts";

/** The farthest a JavaScript date reaches either side of 1970 (ECMA-262 21.4.1.1): past it there is no time to show or store. */
export const MAX_TIME_MS = 8.64e15;

/** An ISO 8601 time (or epoch ms) of a query parameter, or 400 naming it. */
export function timeParam(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new AppError("invalid_request", `${name} must be an ISO 8601 time such as 2026-11-24T10:00:00Z.`);
  if (Math.abs(ms) > MAX_TIME_MS)
    throw new AppError(
      "invalid_request",
      `${name} is past the last time there is (+275760-09-13T00:00:00Z); give an ISO 8601 time such as 2026-11-24T10:00:00Z.`,
    );
  return ms;
}
