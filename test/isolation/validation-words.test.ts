import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kind, OptionalKind, type TSchema } from "@sinclair/typebox";
import { routeGroup } from "../../src/http/request-context.ts";
import { createAccount, dashboardWorld, signInCookie } from "../dashboard/support.ts";
import { TEST_ADMIN_TOKEN } from "../support/harness.ts";
import { objectOf, plausible, routeTable, type Route } from "./route-table.ts";

// Issue 35: validation in words. For every API route of the route table whose body has a schema
// (the operator API, the dashboard API, the operator console's JSON sign-in), each field gets, one
// at a time in an otherwise valid body: a value outside its allowed values (the allowed values
// must be listed), nothing where it is required ("is required"), and a value that breaks its
// format, pattern or length (the rule in words). Each answer is a 4xx that names the field and the
// rule, and never TypeBox's own phrasing ("Expected union value", "Expected required property").

const world = await dashboardWorld();
const routes = routeTable(world.app).filter((r) => {
  const group = routeGroup(r.path);
  return objectOf(r.body) !== null && (group === "admin" || group === "api" || r.path === "/operator/session");
});
let cookie = "";

beforeAll(async () => {
  cookie = await signInCookie(world.url, await createAccount(world.url, "Acme"));
});
afterAll(() => world.close());

type Schema = TSchema & Record<string, unknown>;

/** The fixed values a field admits (a union of literals, or of literals and null), or null. */
function choicesOf(schema: Schema): unknown[] | null {
  const members = (schema.anyOf as Schema[] | undefined)?.filter((m) => m[Kind] !== "Null");
  if (members === undefined || members.some((m) => !("const" in m))) return null;
  return members.map((m) => m.const);
}

/** A value breaking the field's format, pattern or length, with the words its rule must be said in. */
function badFormat(schema: Schema): { value: string; words: RegExp } | null {
  if (schema[Kind] !== "String") return null;
  if (schema.format === "email") return { value: "not an email", words: /an email address/ };
  if (typeof schema.pattern === "string") return { value: "!?", words: /(only letters, digits|6 digits|hexadecimal)/ };
  const min = schema.minLength as number | undefined;
  if (min !== undefined && min > 1) return { value: "x", words: new RegExp(`at least ${min} characters long`) };
  return null;
}

interface Probe {
  what: string;
  field: string;
  body: Record<string, unknown>;
  words: RegExp;
}

function probesOf(route: Route): Probe[] {
  const schema = objectOf(route.body)!;
  const base = plausible(schema) as Record<string, unknown>;
  const out: Probe[] = [];
  for (const [field, raw] of Object.entries(schema.properties)) {
    const property = raw as Schema;
    const choices = choicesOf(property);
    if (choices) {
      const listed = choices.map((c) => JSON.stringify(c)).join(", ");
      out.push({
        what: "a value outside its choices",
        field,
        body: { ...base, [field]: "not-a-choice" },
        words: new RegExp(`must be one of ${listed.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
      });
    }
    const items = property.items as Schema | undefined;
    const itemChoices = items && choicesOf(items);
    if (itemChoices)
      out.push({
        what: "a list item outside its choices",
        field: `${field}[0]`,
        body: { ...base, [field]: ["not-a-choice"] },
        words: new RegExp(`must be one of ${JSON.stringify(itemChoices[0])}`),
      });
    if (property[OptionalKind] !== "Optional") {
      const { [field]: _, ...without } = base;
      out.push({ what: "nothing where it is required", field, body: without, words: /is required/ });
    }
    const format = badFormat(property);
    if (format)
      out.push({
        what: "a value breaking its rule",
        field,
        body: { ...base, [field]: format.value },
        words: format.words,
      });
  }
  return out;
}

function send(route: Route, body: unknown): Promise<Response> {
  const path = route.path.replace(/:[a-z_]+/g, "x");
  const group = routeGroup(route.path);
  const headers: Record<string, string> = { "content-type": "application/json", origin: world.url };
  if (group === "admin") headers.authorization = `Bearer ${TEST_ADMIN_TOKEN}`;
  if (group === "api") headers.cookie = cookie;
  return fetch(`${world.url}${path}`, { method: route.method, headers, body: JSON.stringify(body) });
}

test("the sweep reaches the API's routes with bodies, and probes each", () => {
  expect(routes.length).toBeGreaterThan(15);
  for (const key of [
    "POST /admin/accounts",
    "PATCH /admin/accounts/:id",
    "POST /api/endpoints",
    "POST /admin/users/:id/password",
  ])
    expect(routes.map((r) => r.key)).toContain(key);
  expect(routes.flatMap(probesOf).length).toBeGreaterThan(40);
});

for (const route of routes) {
  test(`${route.key}: a bad value, a missing field and a broken format are refused naming the field and the rule`, async () => {
    const problems: string[] = [];
    for (const probe of probesOf(route)) {
      const response = await send(route, probe.body);
      const text = await response.text();
      const message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? "";
      const where = `${probe.what} for ${probe.field}: ${response.status} ${message || text.slice(0, 120)}`;
      if (response.status < 400 || response.status >= 500) problems.push(where);
      else if (!message.includes(probe.field)) problems.push(`${where} (does not name ${probe.field})`);
      else if (!probe.words.test(message)) problems.push(`${where} (does not say ${probe.words})`);
      else if (/Expected|Unexpected/.test(message)) problems.push(`${where} (the schema library's words)`);
    }
    expect(problems).toEqual([]);
  });
}
