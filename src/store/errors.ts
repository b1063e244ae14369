/**
 * The database could not be reached (a networked backend's server is down or too slow). Nothing
 * was stored; the request is answered 503 so that its sender tries again later.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** A row the same transaction has just written or locked: its absence is a fault that names the row. */
export function writtenRow<T>(row: T | undefined, what: string): T {
  if (row === undefined) throw new Error(`${what} is not there right after its write`);
  return row;
}

/** Thrown inside a transaction that creates a user whose email is taken, to roll all of it back; never leaves the store. */
export class EmailTaken extends Error {}

/** A starting server gave up on a database that kept refusing its connections (the message says what to change). */
export class DatabaseRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseRefusedError";
  }
}
