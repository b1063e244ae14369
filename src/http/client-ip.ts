import type { Server } from "bun";

/**
 * The address a request came from, as its connection shows it: the audit log's `ip`. Headers such
 * as X-Forwarded-For are not read: anyone can send them, and nothing here says which proxy to trust.
 */
export function clientIp(server: Pick<Server<unknown>, "requestIP"> | null, request: Request): string | null {
  return server?.requestIP(request)?.address ?? null;
}
