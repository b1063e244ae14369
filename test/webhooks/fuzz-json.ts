/**
 * Writes JSON the way no serialiser of ours would: random whitespace, escapes (\uXXXX, \/, escaped
 * member names), numbers like 1.0, 1e2 and -0, shuffled member order, extra members. Seeded, so a
 * failing case can be replayed.
 */
export function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!,
  };
}

export type Rng = ReturnType<typeof rng>;

const SPACES = ["", "", " ", "\n", "\t", "  ", "\r\n", "\n    "];
const NUMBERS = ["1.0", "1e2", "-0", "0.10", "1E+3", "12345678901234567890", "3.14159265358979323846", "0", "-1.5e-7"];
const TEXTS = [
  "hi",
  'a"quote',
  "back\\slash",
  "brackets ] } [ {",
  "comma, colon:",
  "émoji 🎉 ünïcode",
  "slash / here",
  "",
  "tab\there",
  "line\nbreak",
  "\u2028sep",
];

export function ws(r: Rng): string {
  return r.pick(SPACES);
}

/** A JSON string literal for `text`, escaping some characters in unusual but valid ways. */
export function str(r: Rng, text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else if (ch === "/" && r.next() < 0.5) out += "\\/";
    else if (code < 0x10000 && r.next() < 0.2) out += `\\u${code.toString(16).padStart(4, "0").toUpperCase()}`;
    else out += ch;
  }
  return `${out}"`;
}

export function obj(r: Rng, members: [string, string][], shuffle = true): string {
  const list = [...members];
  if (shuffle) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = r.int(i + 1);
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
  }
  return `{${ws(r)}${list.map(([k, v]) => `${str(r, k)}${ws(r)}:${ws(r)}${v}`).join(`${ws(r)},${ws(r)}`)}${ws(r)}}`;
}

export function arr(r: Rng, items: string[]): string {
  return `[${ws(r)}${items.join(`${ws(r)},${ws(r)}`)}${ws(r)}]`;
}

/** Some value of arbitrary shape and depth. */
export function anyValue(r: Rng, depth = 0): string {
  const kind = depth > 2 ? r.int(4) : r.int(6);
  switch (kind) {
    case 0:
      return str(r, r.pick(TEXTS));
    case 1:
      return r.pick(NUMBERS);
    case 2:
      return r.pick(["true", "false", "null"]);
    case 3:
      return str(r, `${r.pick(TEXTS)}${r.int(1000)}`);
    case 4:
      return arr(
        r,
        Array.from({ length: r.int(3) }, () => anyValue(r, depth + 1)),
      );
    default:
      return obj(
        r,
        Array.from(
          { length: r.int(3) },
          (_, i) => [`k${i}${r.pick(TEXTS)}`, anyValue(r, depth + 1)] as [string, string],
        ),
      );
  }
}

/** One change for `field` on `phone`, with odd formatting throughout. */
export function change(r: Rng, field: string, phone: string): string {
  const value = obj(r, [
    ["messaging_product", str(r, "whatsapp")],
    [
      "metadata",
      obj(r, [
        ["display_phone_number", str(r, "15550001111")],
        ["phone_number_id", str(r, phone)],
      ]),
    ],
    [
      "messages",
      arr(r, [
        obj(r, [
          ["from", str(r, "15550002222")],
          ["id", str(r, `wamid.${r.int(1e9)}`)],
          ["timestamp", str(r, "1767225600")],
          ["type", str(r, "text")],
          ["text", obj(r, [["body", str(r, r.pick(TEXTS))]])],
        ]),
      ]),
    ],
    ["extra", anyValue(r)],
    ["score", r.pick(NUMBERS)],
  ]);
  return obj(r, [
    ["field", str(r, field)],
    ["value", value],
  ]);
}

export function entry(r: Rng, wabaId: string, changes: string[]): string {
  const members: [string, string][] = [
    ["id", str(r, wabaId)],
    ["changes", arr(r, changes)],
  ];
  if (r.next() < 0.5) members.push(["time", r.pick(NUMBERS)]);
  return obj(r, members);
}

/** The whole body: `object`, `entry` (member names sometimes escaped) and maybe an extra member. */
export function body(r: Rng, entries: string[]): { text: string; objectRaw: string } {
  const objectRaw = str(r, "whatsapp_business_account");
  const members: [string, string][] = [
    ["entry", arr(r, entries)],
    ["object", objectRaw],
  ];
  if (r.next() < 0.4) members.push(["note", anyValue(r)]);
  let text = `${ws(r)}${obj(r, members)}${ws(r)}`;
  // Member names spelled with escapes still mean `entry` / `object` to JSON.parse and to the scanner.
  if (r.next() < 0.3) text = text.replace('"entry"', '"entr\\u0079"');
  if (r.next() < 0.3) text = text.replace('"object"', '"\\u006fbject"');
  return { text, objectRaw };
}
