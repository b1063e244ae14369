import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";

/**
 * Outside the proxy, a request whose Host is missing or is no host (`a b`, `[::1`, empty, an
 * HTTP/1.0 request without one) is 400 before any hook or route reads its URL: Bun then gives
 * `request.url` as a bare path or a string no URL parser takes, and every `new URL(request.url)`
 * would throw (a 500). The proxy never gets here (its native route) and reads only the target.
 */
export function hostGuard() {
  return new Elysia({ name: "host-guard" }).onRequest(({ request }) => {
    if (!URL.canParse(request.url)) {
      throw new AppError(
        "invalid_request",
        "The Host header is missing or is not a host; send the host (and port) the service was reached at.",
      );
    }
  });
}
