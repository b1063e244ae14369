import { byteAt, parseIpv6, type IpAddress } from "./ip.ts";

/** An address range: `bits` leading bits of `bytes`. */
export interface Cidr {
  family: 4 | 6;
  bytes: Uint8Array;
  bits: number;
}

export function inRange(ip: IpAddress, range: Cidr): boolean {
  if (ip.family !== range.family) return false;
  for (let bit = 0; bit < range.bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((byteAt(ip.bytes, byte) & mask) !== (byteAt(range.bytes, byte) & mask)) return false;
  }
  return true;
}

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * An address as a peer or a proxy writes it: a dotted quad or IPv6 (no inet_aton spelling such as
 * `127.1`, which no proxy writes and which would only hide what an address is). An IPv4-mapped
 * IPv6 address (`::ffff:10.0.0.1`, what a dual-stack socket reports) is its IPv4 address.
 */
export function parseAddress(text: string): IpAddress | null {
  if (DOTTED_QUAD.test(text)) return { family: 4, bytes: new Uint8Array(text.split(".").map(Number)) };
  const v6 = parseIpv6(text);
  if (!v6) return null;
  const mapped = v6.slice(0, 12).every((b, i) => b === (i >= 10 ? 0xff : 0));
  return mapped ? { family: 4, bytes: v6.slice(12) } : { family: 6, bytes: v6 };
}

/** `10.0.0.0/8`, `2001:db8::/32`, or one address (all its bits); null when it is neither. */
export function parseCidr(text: string): Cidr | null {
  const [base = "", bits, ...rest] = text.split("/");
  const ip = parseAddress(base);
  if (!ip || rest.length > 0) return null;
  const max = ip.family === 4 ? 32 : 128;
  if (bits === undefined) return { ...ip, bits: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { ...ip, bits: Number(bits) };
}
