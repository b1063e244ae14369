import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { openSession, SESSION_COOKIE } from "../../src/auth/session.ts";
import { routeGroup } from "../../src/http/request-context.ts";
import { platformNames } from "../../src/platform/names.ts";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { TEST_ADMIN_TOKEN, TEST_APP_SECRET } from "../support/harness.ts";
import { isolationWorld, operatorSession, seedAccount, type Seeded } from "./accounts.ts";
import { BODIES, envelopeProblem, HOSTLESS, mustRefuse, PROPERTY_VALUES, URL_VALUES } from "./hostile.ts";
import { rawRequest } from "../support/raw-http.ts";
import {
  bodyOf,
  formEncode,
  isOptional,
  objectOf,
  pathParamKind,
  PLAUSIBLE,
  plausible,
  queryOf,
  routeTable,
  type Route,
} from "./route-table.ts";
import { byUser } from "../../src/audit/entry.ts";

// Issue 26: a hostile-input sweep generated from the app's route table. Every path parameter,
// every query parameter and body property a route's schema declares (an HTML form's: its API
// twin's), and every unsafe route's whole body, gets NUL and control bytes, numbers past 2^63 and
// past a date's range, NaN and Infinity, 100,000-deep JSON, 1 MB strings and wrong types, one at a
// time in an otherwise valid request of an account that owns one of everything. No answer is a
// 5xx; every error of the operator API, the dashboard API and ingress is in the catalog's
// envelope; a value the schema does not admit (or a time no date holds, or a control character in
// the URL) is refused with a 4xx. The HTML pages (the dashboard's and the operator console's, the
// latter with an operator's session) answer errors as pages: only "no 5xx" holds there.
// Issue 34: every route is also sent, over a raw socket, without a usable Host (each is a 400 in
// the envelope, whatever the route) and as HTTP/1.0 with one (no 5xx).

// Retries of a signup run hundreds of times here: its rate limit must not answer for the validation.
const w = await isolationWorld({ env: { EMBEDDED_SIGNUP_STARTS_PER_HOUR: "10000" } });
const routes = routeTable(w.t.world.app());
const names = platformNames();

/**
 * Query parameters of routes that read them without a schema: the platform's subscription
 * handshake, and the dashboard's look-ups and the flashes its own redirects ask for.
 */
const UNDECLARED_QUERY: Record<string, string[]> = {
  "GET /webhooks/upstream": ["hub.mode", "hub.verify_token", "hub.challenge"],
  "GET /dashboard/sign-in": ["next", "signed_out"],
  "GET /dashboard/numbers": ["number", "done"],
  "GET /dashboard/numbers/:id/coexistence": ["done"],
  "GET /dashboard/api-keys": ["revoked"],
  "GET /dashboard/settings": ["saved"],
  "GET /dashboard/requests/lookup": ["id"],
  "GET /dashboard/messages/lookup": ["id"],
  "GET /dashboard/endpoints": ["done"],
  "GET /dashboard/endpoints/:id": ["done"],
  "GET /dashboard/deliveries/:id": ["done", "from"],
};

/** Where in an upstream event (ingress has no schema: it reads the body itself) a hostile value goes. */
const EVENT_PLACES: (string | number)[][] = (() => {
  const change = ["entry", 0, "changes", 0];
  const value = [...change, "value"];
  const status = [...value, "statuses", 0];
  return [
    ["object"],
    ["entry"],
    ["entry", 0],
    ["entry", 0, "id"],
    ["entry", 0, "changes"],
    change,
    [...change, "field"],
    value,
    [...value, "metadata"],
    [...value, "metadata", "phone_number_id"],
    [...value, "statuses"],
    status,
    [...status, "id"],
    [...status, "status"],
    [...status, "errors", 0, "code"],
    [...value, "messages", 0, "id"],
  ];
})();

const MARK = "@@hostile@@";

interface Probe {
  route: Route;
  what: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  refuse: boolean;
  deep: boolean;
  /** Sent over a raw socket with this request line and Host (HTTP/1.0, or no usable Host). */
  head?: string;
}

let caller: Seeded;
let values: Record<string, unknown> = PLAUSIBLE;
const failures = new Map<string, string[]>();
let probed = 0;

/**
 * A new session of the caller for each route, so that a route that signs out ends only its own
 * (opened as a sign-in opens one, without checking the password each time: argon2id is slow).
 */
async function session(): Promise<string> {
  const { deps } = w.t.world;
  const user = (await deps.store.users.byEmail(caller.email))!;
  return `${SESSION_COOKIE}=${(await openSession(deps, user, byUser(user, null))).token}`;
}

function event(): Record<string, unknown> {
  const value = {
    messaging_product: names.product,
    metadata: { phone_number_id: caller.ids.number },
    statuses: [{ id: "wamid.hostile", status: "sent", errors: [{ code: 131000 }] }],
    messages: [{ id: "wamid.inbound" }],
  };
  return { object: names.webhookObject, entry: [{ id: caller.ids.waba, changes: [{ field: "messages", value }] }] };
}

function parseOr(json: string, otherwise: unknown): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return otherwise;
  }
}

/** `json` with the value at `place` replaced by the mark, as text. */
function marked(json: unknown, place: (string | number)[]): string {
  const copy = structuredClone(json) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const step of place.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  at[place.at(-1)!] = MARK;
  return JSON.stringify(copy);
}

/** Every probe of one route: one hostile value at a time in an otherwise valid request. */
/** The operator console's HTML pages and forms (its JSON sign-in is an API). */
const isConsolePage = (route: Route) => routeGroup(route.path) === "operator" && route.path !== "/operator/session";

function probes(route: Route, cookie: string): Probe[] {
  const group = routeGroup(route.path);
  const strict = group === "api" || group === "admin" || route.path === "/operator/session";
  const pathWith = (param: string | null, text: string, raw = false, realIds = true) =>
    route.path
      .split("/")
      .map((segment) => {
        if (!segment.startsWith(":") && segment !== "*") return segment;
        const name = segment.replace(/^:/, "");
        if (name === param) return raw ? text : encodeURIComponent(text);
        const named = pathParamKind(route, name);
        return realIds && named.ok && named.kind && caller.ids[named.kind]
          ? encodeURIComponent(caller.ids[named.kind]!)
          : "x";
      })
      .join("/");
  const query = objectOf(queryOf(route, routes));
  const required = Object.fromEntries(
    Object.entries(query?.properties ?? {})
      .filter(([name]) => query!.required?.includes(name))
      .map(([name, schema]) => [name, String(plausible(schema, name, values))]),
  );
  const auth: Record<string, string> =
    group === "admin" ? { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } : { cookie, origin: w.t.url };
  const schema = bodyOf(route, routes);
  const isForm = group === "dashboard" || isConsolePage(route);
  const base = schema ? plausible(schema, "", values) : route.key === "POST /webhooks/upstream" ? event() : null;
  type Body = { text: string | Uint8Array<ArrayBuffer>; type: string } | null;
  const send = (what: string, path: string, search: string, body: Body, refuse: boolean, deep = false): Probe => {
    const headers: Record<string, string> = { ...auth };
    if (body) headers["content-type"] = body.type;
    if (body && route.path === "/webhooks/upstream") {
      headers["x-hub-signature-256"] = hubSignature(
        TEST_APP_SECRET,
        typeof body.text === "string" ? new TextEncoder().encode(body.text) : body.text,
      );
    }
    return {
      route,
      what,
      method: route.method,
      url: `${w.t.url}${path}${search}`,
      headers,
      body: body?.text,
      refuse,
      deep,
    };
  };
  const search = (extra: string) => {
    const fixed = new URLSearchParams(required).toString();
    const all = [fixed, extra].filter(Boolean).join("&");
    return all ? `?${all}` : "";
  };
  const baseBody =
    route.method === "GET" || base === null
      ? null
      : isForm
        ? { text: formEncode(base as Record<string, unknown>), type: "application/x-www-form-urlencoded" }
        : { text: JSON.stringify(base), type: "application/json" };
  const out: Probe[] = [];

  for (const param of route.params) {
    // Only a control character must be refused: another probe may have made an object with a hostile but valid id.
    for (const v of URL_VALUES) {
      out.push(
        send(
          `path ${param} = ${v.name}`,
          pathWith(param, v.text, v.raw),
          search(""),
          baseBody,
          strict && mustRefuse(null, param, v.text, true),
        ),
      );
    }
  }
  const queryNames: [string, TSchema | null][] = [
    ...Object.entries(query?.properties ?? {}),
    ...(UNDECLARED_QUERY[route.key] ?? []).map((n) => [n, null] as [string, null]),
  ];
  for (const [name, propSchema] of queryNames) {
    const others = new URLSearchParams(Object.entries(required).filter(([k]) => k !== name));
    const q = (text: string, raw?: boolean) => {
      const mine = raw ? `${encodeURIComponent(name)}=${text}` : new URLSearchParams({ [name]: text }).toString();
      return `?${[others.toString(), mine].filter(Boolean).join("&")}`;
    };
    for (const v of URL_VALUES) {
      const refuse = strict && !v.raw && mustRefuse(propSchema, name, v.text, true);
      out.push(send(`query ${name} = ${v.name}`, pathWith(null, ""), q(v.text, v.raw), baseBody, refuse));
    }
    out.push(
      send(`query ${name} given twice`, pathWith(null, ""), `${q("1")}&${encodeURIComponent(name)}=2`, baseBody, false),
    );
  }
  if (route.method !== "GET" && base !== null && typeof base === "object") {
    const places =
      route.key === "POST /webhooks/upstream"
        ? EVENT_PLACES
        : Object.keys(objectOf(schema)?.properties ?? {}).map((k) => [k]);
    for (const place of places) {
      const name = place.join(".");
      const propSchema = place.length === 1 ? (objectOf(schema)?.properties[name] ?? null) : null;
      if (isForm) {
        for (const v of URL_VALUES.filter((u) => !u.raw)) {
          const form = { ...(base as Record<string, unknown>), [name]: v.text };
          out.push(
            send(
              `form ${name} = ${v.name}`,
              pathWith(null, ""),
              search(""),
              { text: formEncode(form), type: "application/x-www-form-urlencoded" },
              false,
            ),
          );
        }
        continue;
      }
      const text = marked(base, place);
      for (const v of PROPERTY_VALUES) {
        const parsed = v.deep ? MARK : parseOr(v.json, MARK);
        // Not JSON or too deep for any schema: refused; otherwise what the property's schema admits.
        const refuse = strict && (parsed === MARK || mustRefuse(propSchema, name, parsed, false));
        out.push(
          send(
            `body ${name} = ${v.name}`,
            pathWith(null, ""),
            search(""),
            { text: text.replace(`"${MARK}"`, v.json), type: "application/json" },
            refuse,
            v.deep,
          ),
        );
      }
    }
  }
  if (route.method !== "GET") {
    const declared = schema !== null || route.path === "/webhooks/upstream";
    for (const b of BODIES) {
      // A route that reads no body acts on its object: given one nobody owns, it only shows the body does no harm.
      out.push(
        send(
          `whole body = ${b.name}`,
          pathWith(null, "", false, declared),
          search(""),
          { text: b.bytes, type: b.type },
          strict && declared,
          b.deep,
        ),
      );
    }
  }
  const target = `${pathWith(null, "")}${search("")}`;
  for (const h of HOSTLESS) out.push({ ...send(h.name, "", "", baseBody, true), head: h.head(route.method, target) });
  const host = `${route.method} ${target} HTTP/1.0\r\nHost: ${new URL(w.t.url).host}`;
  out.push({ ...send("HTTP/1.0 with a Host", "", "", baseBody, false), head: host });
  return out;
}

/** A probe's status and body, over a raw socket when it has a `head`, else by fetch. */
async function answer(p: Probe, ms: number): Promise<{ status: number; text: string }> {
  if (p.head === undefined) {
    const r = await fetch(p.url, {
      method: p.method,
      headers: p.headers,
      body: p.body,
      redirect: "manual",
      signal: AbortSignal.timeout(ms),
    });
    return { status: r.status, text: await r.text() };
  }
  const body = typeof p.body === "string" ? new TextEncoder().encode(p.body) : (p.body ?? new Uint8Array());
  const lines = Object.entries({ ...p.headers, ...(p.body === undefined ? {} : { "content-length": body.length }) });
  const head = [p.head, ...lines.map(([name, value]) => `${name}: ${value}`)].join("\r\n");
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), ms)));
  try {
    const r = await Promise.race([rawRequest(w.t.url, head, body), late]);
    return { status: r.status, text: r.body };
  } finally {
    clearTimeout(timer);
  }
}

/** Sends one probe and judges its answer; a probe that gets no answer within `ms` is a failure. */
async function judge(p: Probe, ms: number): Promise<string | null> {
  const group = routeGroup(p.route.path);
  let status: number;
  let text: string;
  try {
    ({ status, text } = await answer(p, ms));
  } catch (error) {
    return `${p.what}: no answer within ${ms / 1000} s (${String(error)})`;
  }
  const excerpt = text.slice(0, 160).replaceAll("\n", " ");
  if (status >= 500) return `${p.what}: ${status} ${excerpt}`;
  if (p.refuse && status < 400) return `${p.what}: accepted with ${status} ${excerpt}`;
  // A rate limit says nothing of the value: it must be refused for what it is.
  if (p.refuse && status === 429) return `${p.what}: rate limited, not judged: ${excerpt}`;
  // No usable Host is refused before routing, the same way everywhere.
  const hostless = p.head !== undefined && p.refuse;
  if (hostless && status !== 400) return `${p.what}: ${status}, not 400: ${excerpt}`;
  if (status >= 400 && (hostless || (group !== "dashboard" && group !== "ops" && !isConsolePage(p.route)))) {
    const problem = envelopeProblem(status, text);
    if (problem) return `${p.what}: ${status} ${problem}: ${excerpt}`;
  }
  return null;
}

/** Runs `work` over `items`, `width` at a time. */
async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

const swept = routes.filter((r) => !r.path.startsWith("/docs"));

beforeAll(async () => {
  caller = await seedAccount(w);
  values = { ...PLAUSIBLE, url: w.hook().url };
  const all: Probe[] = [];
  for (const route of swept) {
    failures.set(route.key, []);
    const group = routeGroup(route.path);
    const cookie =
      group === "api" || group === "dashboard" ? await session() : group === "operator" ? await operatorSession(w) : "";
    all.push(...probes(route, cookie));
  }
  probed = all.length;
  const fail = (p: Probe, problem: string | null) => {
    if (problem) failures.get(p.route.key)!.push(problem);
  };
  await pool(
    all.filter((p) => !p.deep),
    6,
    async (p) => fail(p, await judge(p, 10_000)),
  );
  // Deep bodies one at a time: a server that walks one for seconds holds up every other request.
  // After the first one it fails, the rest are not sent (each is a failure naming the first).
  let broken: string | null = null;
  for (const p of all.filter((p) => p.deep)) {
    if (broken) fail(p, `${p.what}: not sent, deep JSON already failed (${broken})`);
    else {
      const problem = await judge(p, 10_000);
      fail(p, problem);
      if (problem) broken = `${p.route.key} ${problem.slice(0, 80)}`;
    }
  }
}, 120_000);
afterAll(() => w.stop());

test("the sweep reached every route", () => {
  expect([...failures.keys()].sort()).toEqual(swept.map((r) => r.key).sort());
  expect(probed).toBeGreaterThan(1000);
});

test("every route named as reading undeclared query parameters is in the route table", () => {
  expect(Object.keys(UNDECLARED_QUERY).filter((key) => !routes.some((r) => r.key === key))).toEqual([]);
});

// Elysia validates no body declared t.Optional(schema): anything reaches the handler (http/optional-body.ts).
test("no route declares its whole body optional", () => {
  expect(routes.filter((r) => r.body && isOptional(r.body)).map((r) => r.key)).toEqual([]);
});

for (const route of swept) {
  test(`${route.key}: hostile input is refused in the envelope, never a 5xx`, () => {
    expect(failures.get(route.key)).toEqual([]);
  });
}
