import type { Server } from "bun";
import { type Cidr, inRange, parseAddress } from "../ip/cidr.ts";
import { formatIp, type IpAddress } from "../ip/ip.ts";

/** What requestContext stamps on a route's context: the request as its connection delivered it. */
export type Arrived = { arrived?: Request };

/** TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For is believed (docs/configuration.md). */
export type TrustedProxies = readonly Cidr[];

const trusted = (ip: IpAddress, proxies: TrustedProxies) => proxies.some((range) => inRange(ip, range));

/** One hop of X-Forwarded-For: an address, perhaps with a port (`1.2.3.4:5678`, `[2001:db8::1]:80`). */
function hop(text: string): IpAddress | null {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return parseAddress(bracketed[1] ?? "");
  return parseAddress(text) ?? parseAddress(text.replace(/:\d+$/, ""));
}

/**
 * The client's address, given the connection's peer and X-Forwarded-For: the peer itself unless it
 * is a trusted proxy; then the right-most address of X-Forwarded-For that is not itself a trusted
 * proxy (each proxy appends the address it was reached from, so whatever lies left of that is the
 * client's to write). A hop that is not an address stops the walk at the proxy that wrote it.
 */
export function clientAddress(peer: string, forwardedFor: string | null, proxies: TrustedProxies): string {
  if (proxies.length === 0) return peer;
  const from = parseAddress(peer);
  if (!from) return peer;
  let client = from;
  if (trusted(from, proxies) && forwardedFor) {
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const ip = hop((hops[i] ?? "").trim());
      if (!ip) break;
      client = ip;
      if (!trusted(ip, proxies)) break;
    }
  }
  return formatIp(client);
}

/**
 * The address a request came from (docs/configuration.md, TRUSTED_PROXIES): the audit log's `ip`,
 * the request log's and sign-in throttling's. `arrived` is the request as the server delivered it
 * (request-context.ts): a copy made later (request-body.ts puts one with the body read in
 * `request`) has no address. Routes pass `context.server` and `(context as Arrived).arrived`,
 * never the whole context (see requestContext).
 */
export function clientIp(
  proxies: TrustedProxies,
  server: Pick<Server<unknown>, "requestIP"> | null,
  arrived: Request | undefined,
): string | null {
  const peer = arrived && server?.requestIP(arrived)?.address;
  return peer ? clientAddress(peer, arrived.headers.get("x-forwarded-for"), proxies) : null;
}
