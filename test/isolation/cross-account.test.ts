import { afterAll, beforeAll, expect, test } from "bun:test";
import { escapeHtml } from "@kitajs/html";
import {
  apiCall,
  callerAccount,
  isolationWorld,
  operatorSession,
  ownedRows,
  seedAccount,
  type Seeded,
} from "./accounts.ts";
import {
  bodyIdFields,
  bodyOf,
  formEncode,
  formTwin,
  objectOf,
  pathParamKind,
  PLAUSIBLE,
  plausible,
  queryOf,
  queryParamKind,
  routeTable,
  type Kind,
  type Route,
} from "./route-table.ts";

// Issue 26: one account never reaches another's objects. Generated from the app's route table:
// every id a route under /api or /dashboard takes (in its path, its query or its body) is given,
// by account A, the real id of account B's object of that kind and an id that exists nowhere; both
// must be answered alike (status, type, redirect and body, but for the id itself and the trace
// id), and B's rows must be exactly as before. A route or parameter nobody has classified fails.
// The operator console (issue 29) sees every account, but an object under an account's path must
// be that account's: an operator given B's object under A's path is answered as for no object.

const w = await isolationWorld();
const routes = routeTable(w.t.world.app());
/** Console routes of one account's object: /operator/accounts/:account_id/<kind>/:id/…. */
const underAccount = (r: Route) => r.path.startsWith("/operator/accounts/:account_id/") && r.params.length > 1;
const scoped = routes.filter((r) => r.path.startsWith("/api/") || r.path.startsWith("/dashboard") || underAccount(r));

/**
 * Bodies that name the object the call connects (a number with its WABA): another account's is
 * refused with 409 by design, since a business must learn that its number is held elsewhere. Only
 * "refused, and nothing of B's changes" is asserted for them.
 */
const CLAIMS: Record<string, string> = {
  "POST /api/numbers": "connects a bring-your-own number",
  "POST /api/signups": "connects a number through Embedded Signup",
};

type Where = "path" | "query" | "body" | "claim";
interface Case {
  route: Route;
  where: Where;
  name: string;
  kind: Kind;
}

const unclassified: string[] = [];
const cases: Case[] = [];
for (const route of scoped) {
  for (const param of route.params) {
    // The account in a console path is the one the operator opened, not another's.
    if (underAccount(route) && param === "account_id") continue;
    const c = pathParamKind(route, param);
    if (!c.ok) unclassified.push(`${route.key}: ${c.why}`);
    else if (c.kind) cases.push({ route, where: "path", name: param, kind: c.kind });
  }
  const query = route.method === "GET" ? objectOf(queryOf(route, routes)) : null;
  for (const name of Object.keys(query?.properties ?? {})) {
    const c = queryParamKind(name);
    if (!c.ok) unclassified.push(`${route.key}: ${c.why}`);
    else if (c.kind) cases.push({ route, where: "query", name, kind: c.kind });
  }
  const twin = route.path.startsWith("/dashboard/") ? formTwin(route, routes) : route;
  const claim = twin !== null && CLAIMS[twin.key] !== undefined;
  for (const [name, kind] of bodyIdFields(bodyOf(route, routes)))
    cases.push({ route, where: claim ? "claim" : "body", name, kind });
}

let a: Seeded;
let b: Seeded;
/** An operator's session, for the console's routes. */
let operator: string;
/** A URL the relay accepts, so that a body is refused for its id and not for its URL. */
let values: Record<string, unknown> = PLAUSIBLE;
beforeAll(async () => {
  b = await seedAccount(w);
  a = await callerAccount(w);
  operator = await operatorSession(w);
  values = { ...PLAUSIBLE, url: w.hook().url };
}, 60_000);
afterAll(() => w.stop());

/** The same id with its last four letters or digits changed: the same shape, and no object has it. */
function unknownLike(id: string): string {
  const chars = [...id];
  let changed = 0;
  for (let i = chars.length - 1; i >= 0 && changed < 4; i--) {
    const c = chars[i]!;
    const rotate = (first: string, size: number) =>
      String.fromCharCode(((c.charCodeAt(0) - first.charCodeAt(0) + 3) % size) + first.charCodeAt(0));
    if (/[0-9]/.test(c)) chars[i] = rotate("0", 10);
    else if (/[a-z]/.test(c)) chars[i] = rotate("a", 26);
    else if (/[A-Z]/.test(c)) chars[i] = rotate("A", 26);
    else continue;
    changed++;
  }
  return chars.join("");
}

const own = (account: Seeded, kind: Kind) => {
  const id = account.ids[kind];
  if (!id) throw new Error(`seed the caller with a ${kind}: a route takes one beside the id under test`);
  return id;
};

/** The request of `c` by `caller` with `id` in the place under test; every other id is the caller's own. */
function request(c: Case, caller: Seeded, id: string): Promise<Response> {
  const path = c.route.path
    .split("/")
    .map((segment) => {
      if (!segment.startsWith(":") && segment !== "*") return segment;
      const param = segment.replace(/^:/, "");
      if (c.where === "path" && param === c.name) return encodeURIComponent(id);
      const named = pathParamKind(c.route, param);
      return named.ok && named.kind ? encodeURIComponent(own(caller, named.kind)) : "x";
    })
    .join("/");
  const query = c.where === "query" ? `?${new URLSearchParams({ [c.name]: id })}` : "";
  const schema = bodyOf(c.route, routes);
  const body =
    schema && c.route.method !== "GET" ? (plausible(schema, "", values) as Record<string, unknown>) : undefined;
  if (body && (c.where === "body" || c.where === "claim")) {
    for (const [name, kind] of bodyIdFields(schema))
      body[name] = name === c.name ? id : c.where === "claim" ? b.ids[kind] : own(caller, kind);
  }
  if (c.route.path.startsWith("/api/")) return apiCall(w.t.url, caller.cookie, c.route.method, path + query, body);
  return fetch(`${w.t.url}${path}${query}`, {
    method: c.route.method,
    redirect: "manual",
    headers: {
      cookie: c.route.path.startsWith("/operator/") ? operator : caller.cookie,
      origin: w.t.url,
      ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    },
    body: body ? formEncode(body) : undefined,
  });
}

/** What an answer tells the caller, with the id it was asked about and its trace id taken out. */
async function answer(r: Response, id: string) {
  let text = await r.text();
  let location = r.headers.get("location") ?? "";
  for (const form of new Set([id, encodeURIComponent(id), escapeHtml(id), JSON.stringify(id).slice(1, -1)])) {
    text = text.replaceAll(form, "<id>");
    location = location.replaceAll(form, "<id>");
  }
  const trace = /req_[0-9A-Za-z_-]{20}/g;
  return { status: r.status, type: r.headers.get("content-type"), location, body: text.replace(trace, "<trace>") };
}

test("every id a route under /api or /dashboard, or under an account in the console, takes is classified", () => {
  expect(unclassified).toEqual([]);
  expect(cases.length).toBeGreaterThan(30);
});

for (const c of cases) {
  test(`${c.route.key}: ${c.where} ${c.name} = another account's ${c.kind}`, async () => {
    const theirs = b.ids[c.kind];
    if (!theirs) throw new Error(`seed the other account with a ${c.kind}`);
    const before = await ownedRows(w.t.world.deps.query, b);
    if (c.where === "claim") {
      const r = await request(c, a, theirs);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    } else {
      const missing = unknownLike(theirs);
      const asUnknown = await answer(await request(c, a, missing), missing);
      const asTheirs = await answer(await request(c, a, theirs), theirs);
      expect(asTheirs).toEqual(asUnknown);
      // The id is real and the request well formed: its owner reads it, or the caller with its own id goes through.
      if (c.where === "path" && c.route.method === "GET")
        expect((await request(c, b, theirs)).status).toBeLessThan(400);
      if (c.where === "body") expect((await request(c, a, own(a, c.kind))).status).toBeLessThan(400);
    }
    expect(await ownedRows(w.t.world.deps.query, b)).toEqual(before);
  });
}
