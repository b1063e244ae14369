import { type Cidr, inRange } from "../ip/cidr.ts";
import { formatIp, parseIp, type IpAddress } from "../ip/ip.ts";

/** The blocked ranges of docs/webhooks.md#url-rules, as data. */
export const BLOCKED_IPV4 = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
] as const;
/**
 * Besides the unspecified, loopback, unique-local, link-local and multicast ranges: site-local
 * (deprecated, still routed inside some networks), the rest of fe00::/9 (reserved), the
 * discard-only prefix, and, whole, the ranges that tunnel to IPv4 or
 * to a local network at an address we cannot check as IPv4 (NAT64 for local use, whose prefix
 * length varies; 6to4, deprecated; Teredo, whose client address is obscured). No public receiver
 * needs them.
 */
export const BLOCKED_IPV6 = [
  "::/128",
  "::1/128",
  "100::/64",
  "fc00::/7",
  "fe00::/9",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8",
  "64:ff9b:1::/48",
  "2001::/32",
  "2002::/16",
] as const;

/** What DEV_MODE opens up (docs/operations.md#configuration): loopback only. Every other range stays blocked. */
const LOOPBACK = ["127.0.0.0/8", "::1/128"] as const;

/**
 * IPv6 prefixes that carry an IPv4 address in their last 32 bits and reach it: IPv4-mapped
 * (docs/webhooks.md#url-rules), IPv4-translated (SIIT), IPv4-compatible (deprecated, still routed
 * by some stacks) and NAT64's well-known prefix. Their embedded address is checked against the IPv4 list.
 */
const EMBEDS_IPV4 = ["::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96"] as const;

function cidr(text: string): Cidr {
  const [base = "", bits] = text.split("/");
  const ip = parseIp(base);
  if (!ip) throw new Error(`bad range ${text}`);
  return { family: ip.family, bytes: ip.bytes, bits: Number(bits) };
}

const blocked = [...BLOCKED_IPV4, ...BLOCKED_IPV6].map(cidr);
const loopback = LOOPBACK.map(cidr);
const embedding = EMBEDS_IPV4.map(cidr);

export interface AddressPolicy {
  /** DEV_MODE: loopback receivers are allowed. */
  allowLoopback: boolean;
  /** The service's own addresses (its interfaces and listen address), in canonical form. */
  selfAddresses: ReadonlySet<string>;
}

/** The IPv4 address an IPv6 address stands for, when it embeds one. */
function embeddedIpv4(ip: IpAddress): IpAddress | null {
  if (ip.family !== 6) return null;
  // `::` and `::1` lie in ::/96 but are IPv6's own unspecified and loopback addresses.
  const text = formatIp(ip);
  if (text === "::" || text === "::1") return null;
  return embedding.some((range) => inRange(ip, range)) ? { family: 4, bytes: ip.bytes.slice(12) } : null;
}

/**
 * Why an address must not be contacted, or null when it may be. `address` may be in any spelling;
 * text that is not an IP address is refused (a resolver must answer with addresses).
 */
export function blockedReason(address: string, policy: AddressPolicy): string | null {
  const ip = parseIp(address);
  if (!ip) return `not an IP address: ${address}`;
  const target = embeddedIpv4(ip) ?? ip;
  const canonical = formatIp(target);
  const isLoopback = loopback.some((range) => inRange(target, range));
  if (isLoopback && policy.allowLoopback) return null;
  if (policy.selfAddresses.has(canonical) || policy.selfAddresses.has(formatIp(ip)))
    return `${canonical} is this service's own address`;
  if (blocked.some((range) => inRange(target, range))) return `${canonical} is in a blocked range`;
  return null;
}

/** Canonical texts of the given addresses, for AddressPolicy.selfAddresses. */
export function canonicalAddresses(addresses: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const a of addresses) {
    const ip = parseIp(a);
    if (ip) out.add(formatIp(ip));
  }
  return out;
}
