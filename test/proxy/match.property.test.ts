import { describe, expect, test } from "bun:test";
import { platformNames } from "../../src/platform/names.ts";
import { allowList } from "../../src/proxy/allow-list.ts";
import { routeMatcher } from "../../src/proxy/match.ts";
import { upstreamQuery } from "../../src/proxy/query.ts";
import { seededRandom, type Random } from "../../src/runtime/random.ts";

/** Small generator helpers over the injected, seeded random source. */
function gen(random: Random) {
  const int = (n: number) => {
    const [a, b, c] = random.bytes(3);
    return ((a! << 16) | (b! << 8) | c!) % n;
  };
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chars = (alphabet: string, min: number, max: number) => {
    let out = "";
    for (let i = min + int(max - min + 1); i > 0; i--) out += alphabet[int(alphabet.length)];
    return out;
  };
  return { int, pick, chars };
}

// docs/proxy.md#the-allow-list written out independently of the allow-list data, as "METHOD edge" (edge "" = the
// object).
const matchRoute = routeMatcher(allowList(platformNames()));
const SPEC_ROWS = new Set([
  "POST messages",
  "PUT messages",
  "POST media",
  "GET ",
  "DELETE ",
  "GET message_templates",
  "POST message_templates",
  "DELETE message_templates",
  "GET chat_business_profile",
]);
const MEDIA_ROWS = new Set(["GET ", "DELETE "]);
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "get", "TRACE"];
const EDGES = [
  "messages",
  "media",
  "message_templates",
  "chat_business_profile",
  "Messages",
  "phone_numbers",
  "",
  "..",
  "messages%2F",
  "media ",
];
const NASTY = "/.%?#&=+ _-~:;@!$'()*,\u00e9\u0000\ud83d\ude00aZ09";

describe("path matcher (property)", () => {
  test("structured cases: accepted exactly when version, id, method and edge fit a documented allow-list row", () => {
    const g = gen(seededRandom(20260101));
    for (let i = 0; i < 20_000; i++) {
      const goodVersion = g.int(4) > 0;
      const version = goodVersion
        ? `v${g.int(30)}.0`
        : g.pick(["v21", "v21.1", "V21.0", "21.0", "v.0", "v21.0.0", "vx.0", ""]);
      const goodId = g.int(4) > 0;
      const id = goodId ? g.chars("0123456789", 1, 20) : g.chars(NASTY, 0, 6);
      const edge = g.int(3) === 0 ? null : g.pick(EDGES);
      const method = g.pick(METHODS);
      const scope =
        g.int(3) === 0
          ? ""
          : g.pick([
              "phone_number_id=123",
              "phone_number_id=",
              "phone_number_id=1&phone_number_id=2",
              "x=1&phone_number_id=77",
              "phone_number_id=a%2Fb",
            ]);
      const path = `/${version}/${id}${edge === null ? "" : `/${edge}`}`;
      const match = matchRoute(method, path, scope || null);

      const idOk = /^[0-9A-Za-z_-]{1,64}$/.test(id);
      const versionOk = /^v\d+\.0$/.test(version);
      const row = `${method} ${edge ?? ""}`;
      const scopeOk = /^(x=1&)?phone_number_id=[0-9]+$/.test(scope);
      const expected =
        versionOk && idOk && edge !== "" && SPEC_ROWS.has(row) && (!MEDIA_ROWS.has(row) || method === "GET" || scopeOk);
      if (expected !== (match !== null))
        throw new Error(`${method} ${path}?${scope}: expected ${expected ? "a match" : "404"}`);
      if (match) {
        expect(match.version).toBe(version);
        expect(match.id).toBe(id);
        expect(match.routes.every((r) => r.method === method && (r.edge ?? "") === (edge ?? ""))).toBe(true);
        expect(match.routes.some((r) => r.id === "media")).toBe(MEDIA_ROWS.has(row) && scopeOk);
      }
    }
  });

  test("random strings: never throws, and nothing accepted can name another path", () => {
    const g = gen(seededRandom(7));
    for (let i = 0; i < 20_000; i++) {
      const path = g.pick(["/", "/v21.0/", ""]) + g.chars(`${NASTY}messagemdiatpl`, 0, 30);
      const match = matchRoute(g.pick(METHODS), path, g.int(2) ? null : g.chars(NASTY, 0, 20));
      if (match) {
        const segments = path.split("/");
        expect(segments.length === 3 || segments.length === 4).toBe(true);
        expect(path).not.toMatch(/%|\.\.|\/\/|\?|#|\\/);
      }
    }
  });
});

describe("query rewrite (property)", () => {
  const CREDENTIAL_NAMES = [
    "access_token",
    "appsecret_proof",
    "access%5Ftoken",
    "%61ccess_token",
    "appsecret%5fproof",
    "access_token",
  ];
  const OTHER_NAMES = [
    "fields",
    "limit",
    "after",
    "phone_number_id",
    "access_tokens",
    "xaccess_token",
    "access-token",
    "Access_Token",
    "access+token",
    "access_token%",
    "%zz",
    "",
    "a%20b",
    "appsecret_proof2",
  ];
  const VALUES = ["", "1", "a%2Cb", "x+y", "%E2%9C%93", "==", "v=w", "%", "\u00e9"];

  test("credentials are removed however they are encoded; everything else stays byte for byte, in order", () => {
    const g = gen(seededRandom(99));
    for (let i = 0; i < 20_000; i++) {
      const pairs: { text: string; credential: boolean }[] = [];
      for (let n = g.int(7); n > 0; n--) {
        const credential = g.int(3) === 0;
        const name = credential ? g.pick(CREDENTIAL_NAMES) : g.pick(OTHER_NAMES);
        const text = g.int(5) === 0 ? name : `${name}=${g.pick(VALUES)}`;
        pairs.push({ text, credential });
      }
      const raw = pairs.length === 0 && g.int(2) ? null : pairs.map((p) => p.text).join("&");
      const proof = g.chars("0123456789abcdef", 64, 64);
      const out = upstreamQuery(raw, proof);
      const kept = pairs.filter((p) => !p.credential).map((p) => p.text);
      // An empty query ("?" alone) has nothing to keep.
      expect(out).toBe(raw ? [...kept, `appsecret_proof=${proof}`].join("&") : `appsecret_proof=${proof}`);
      const parsed = new URLSearchParams(out);
      expect(parsed.getAll("access_token")).toEqual([]);
      expect(parsed.getAll("appsecret_proof")).toEqual([proof]);
    }
  });
});
