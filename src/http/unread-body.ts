/**
 * An answer given before its request's body was read (a refused key, an unknown path) closes the
 * connection: otherwise Bun keeps reading what the client still sends, a byte a second for as long
 * as the idle time-out (255 s) allows, and the connection stays open with nothing to serve.
 */
export function closedIfUnread(request: Request, response: Response): Response {
  // bodyUsed first: asking for `body` makes the request's stream (bench/RESULTS.md, issue 40).
  if (request.bodyUsed || request.body === null || request.headers.get("content-length") === "0") return response;
  try {
    response.headers.set("connection", "close");
    return response;
  } catch {
    // A response whose headers are immutable (as fetch returns them) is answered as a copy.
    const headers = new Headers(response.headers);
    headers.set("connection", "close");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
