import { AppError } from "../errors/catalog.ts";

/**
 * Keyset pages, newest first: a cursor is opaque to clients and holds the (time, id) of the last
 * row of the previous page.
 */
export function encodeCursor(at: number, id: string): string {
  return Buffer.from(`${at}.${id}`).toString("base64url");
}

export function decodeCursor(cursor: string): { at: number; id: string } {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const dot = text.indexOf(".");
  const at = Number(text.slice(0, dot));
  const id = text.slice(dot + 1);
  // A made-up cursor may hide a control character (PostgreSQL's text cannot hold NUL): not one of ours.
  if (dot < 1 || !Number.isSafeInteger(at) || [...id].some(isControl))
    throw new AppError("invalid_request", "cursor is not valid; use next_cursor of a previous page.");
  return { at, id };
}

/** A control character (C0 or DEL): never in an id of ours. */
const isControl = (c: string) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;
