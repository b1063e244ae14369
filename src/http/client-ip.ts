import type { Server } from "bun";

/** What requestContext stamps on a route's context: the request as its connection delivered it. */
export type Arrived = { arrived?: Request };

/**
 * The address a request came from, as its connection shows it: the audit log's `ip`. `arrived` is
 * the request as the server delivered it (request-context.ts): a copy made later (request-body.ts
 * puts one with the body read in `request`) has no address. Headers such as X-Forwarded-For are
 * not read: anyone can send them, and nothing here says which proxy to trust. Routes pass
 * `context.server` and `(context as Arrived).arrived`, never the whole context (see requestContext).
 */
export function clientIp(
  server: Pick<Server<unknown>, "requestIP"> | null,
  arrived: Request | undefined,
): string | null {
  return (arrived && server?.requestIP(arrived)?.address) ?? null;
}
