/**
 * IP address parsing that accepts every spelling a URL or a resolver may hand us, so that a
 * blocked address cannot hide behind an unusual form: IPv4 in the inet_aton forms (decimal
 * `2130706433`, hex `0x7f000001`, octal `0177.0.0.1`, short `127.1`, mixed), and IPv6 with `::`,
 * embedded dotted IPv4 (`::ffff:127.0.0.1`), brackets and zone ids.
 */
export type IpAddress = { family: 4; bytes: Uint8Array } | { family: 6; bytes: Uint8Array };

/** Byte `i` of an address, which has it (4 or 16 bytes); an index past the end is a fault, said plainly. */
export function byteAt(bytes: Uint8Array, i: number): number {
  const byte = bytes[i];
  if (byte === undefined) throw new RangeError(`byte ${i} of a ${bytes.length}-byte address`);
  return byte;
}

function ipv4Part(text: string): number | null {
  if (text === "") return null;
  let value: number;
  if (/^0[xX][0-9a-fA-F]*$/.test(text)) value = text.length === 2 ? 0 : parseInt(text.slice(2), 16);
  else if (/^0[0-7]+$/.test(text)) value = parseInt(text.slice(1), 8);
  else if (/^(0|[1-9][0-9]*)$/.test(text)) value = Number(text);
  else return null;
  return Number.isSafeInteger(value) ? value : null;
}

/** IPv4 in any inet_aton spelling (1 to 4 parts; the last part fills the remaining bytes). */
export function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length > 4) return null;
  const values = parts.map(ipv4Part);
  if (values.some((v) => v === null)) return null;
  const nums = values as number[];
  const last = nums.at(-1);
  if (last === undefined) return null;
  const leading = nums.slice(0, -1);
  if (leading.some((v) => v > 255)) return null;
  const lastBytes = 4 - leading.length;
  if (last >= 2 ** (8 * lastBytes)) return null;
  const out = new Uint8Array(4);
  out.set(leading);
  for (let i = 0; i < lastBytes; i++) out[3 - i] = Math.floor(last / 2 ** (8 * i)) & 0xff;
  return out;
}

/** A trailing dotted IPv4 (`::ffff:1.2.3.4`) read off, two zero groups in its place; null when it is malformed. */
function dottedTail(text: string): { text: string; tail: Uint8Array | null } | null {
  const lastColon = text.lastIndexOf(":");
  const lastGroup = text.slice(lastColon + 1);
  if (!lastGroup.includes(".")) return { text, tail: null };
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(lastGroup)) return null;
  const tail = parseIpv4(
    lastGroup
      .split(".")
      .map((p) => String(Number(p)))
      .join("."),
  );
  if (!tail) return null;
  return { text: `${text.slice(0, lastColon + 1)}0:0`, tail };
}

/** The eight groups, `::` filled with zeros; null when there are more or fewer. */
function eightGroups(text: string): string[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const [before = "", after] = halves;
  const head = groups(before);
  const rest = after === undefined ? [] : groups(after);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  return [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest];
}

/** IPv6, with optional brackets, zone id, `::` and a trailing dotted IPv4. */
export function parseIpv6(input: string): Uint8Array | null {
  let text = input.startsWith("[") && input.endsWith("]") ? input.slice(1, -1) : input;
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  if (!text.includes(":")) return null;
  const split = dottedTail(text);
  const all = split && eightGroups(split.text);
  if (!split || !all) return null;
  const out = new Uint8Array(16);
  for (const [i, g] of all.entries()) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  }
  if (split.tail) out.set(split.tail, 12);
  return out;
}

/** An IP literal in any spelling, or null when the text is a hostname. */
export function parseIp(text: string): IpAddress | null {
  const v6 = parseIpv6(text);
  if (v6) return { family: 6, bytes: v6 };
  const v4 = parseIpv4(text);
  return v4 ? { family: 4, bytes: v4 } : null;
}

/** The canonical text of an address (dotted quad, or compressed IPv6 in brackets-free form). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [...ip.bytes].join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((byteAt(ip.bytes, i) << 8) | byteAt(ip.bytes, i + 1));
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i > 1) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}
