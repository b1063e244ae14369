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
