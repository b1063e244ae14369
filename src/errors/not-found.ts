import { AppError } from "./catalog.ts";

/** `row`, or the 404 of a row that is not there (deleted between a check and the write that answered it). */
export function orNotFound<T>(row: T | undefined, what: string): T {
  if (row === undefined) throw new AppError("not_found", `No ${what}.`);
  return row;
}
