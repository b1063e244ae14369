import { Kind as SchemaKind, OptionalKind, type TSchema } from "@sinclair/typebox";
import type { App } from "../../src/app.ts";
import { CONSOLE_FORMS } from "../../src/console/forms.ts";

/**
 * The app's own route table, read from Elysia (`app.routes`), with what the isolation suites need
 * to know of each route: its path parameters, and the TypeBox schemas of its query and body where
 * the route declares them. Nothing here lists routes: a new route is picked up as it is added.
 */
export interface Route {
  method: string;
  path: string;
  /** Path parameter names in order (`*` for a wildcard). */
  params: string[];
  query: TSchema | null;
  body: TSchema | null;
  key: string;
}

export function routeTable(app: App): Route[] {
  return app.routes
    .filter((r) => r.method !== "HEAD" && r.method !== "OPTIONS")
    .map((r) => {
      const hooks = (r.hooks ?? {}) as { query?: unknown; body?: unknown };
      const params = r.path
        .split("/")
        .filter((s) => s.startsWith(":") || s === "*")
        .map((s) => s.replace(/^:/, ""));
      const schema = (s: unknown) => (s && typeof s === "object" && SchemaKind in s ? (s as TSchema) : null);
      return {
        method: r.method,
        path: r.path,
        params,
        query: schema(hooks.query),
        body: schema(hooks.body),
        key: `${r.method} ${r.path}`,
      };
    });
}

/** The HTML pages' GET routes read the same filters as their JSON twin (`/dashboard/X` and `/api/X`): its query schema. */
export function queryOf(route: Route, routes: Route[]): TSchema | null {
  if (route.query || !route.path.startsWith("/dashboard/")) return route.query;
  const twin = routes.find(
    (r) => r.method === route.method && r.path === route.path.replace(/^\/dashboard\//, "/api/"),
  );
  return twin?.query ?? null;
}

/** What an account owns, as the isolation suites name them. */
export type Kind =
  | "endpoint"
  | "delivery"
  | "request"
  | "message"
  | "number"
  | "waba"
  | "signup"
  | "recovery"
  | "key"
  | "notification"
  | "account"
  | "user";

/** A parameter named after what it holds (`:phone_number_id`, `?endpoint_id=`, a body's `waba_id`). */
const BY_NAME: Record<string, Kind> = {
  phone_number_id: "number",
  number: "number",
  waba_id: "waba",
  message_id: "message",
  endpoint_id: "endpoint",
  delivery_id: "delivery",
  request_id: "request",
  signup_id: "signup",
  recovery_id: "recovery",
  api_key_id: "key",
  notification_id: "notification",
  account_id: "account",
  user_id: "user",
  // The audit log's filter by who made a change: a dashboard user's id (or email).
  actor: "user",
};

/** A generic `:id` holds what the collection before it holds (`/api/endpoints/:id`, `/dashboard/numbers/:id/sync`). */
const BY_COLLECTION: Record<string, Kind> = {
  endpoints: "endpoint",
  deliveries: "delivery",
  requests: "request",
  messages: "message",
  numbers: "number",
  wabas: "waba",
  signups: "signup",
  recoveries: "recovery",
  "api-keys": "key",
  notifications: "notification",
  accounts: "account",
  users: "user",
};

/** Path parameters that name nothing an account owns, and why. */
const NOT_AN_ID: Record<string, string> = {
  "/dashboard/assets/:name": "the dashboard's static files, the same for everyone",
  "/dashboard/*": "the dashboard's not-found page",
  "/operator/*": "the operator console's not-found page",
};

/** Query parameters that are not ids: filters by value, times, paging. */
const NOT_AN_ID_QUERY = new Set([
  "status",
  "action",
  "field",
  "from",
  "to",
  "last_status",
  "error_code",
  "cursor",
  "limit",
  "hours",
]);

export type Classified = { ok: true; kind: Kind | null } | { ok: false; why: string };

/** Which of an account's objects a path parameter of `route` names; null when it names none. */
export function pathParamKind(route: Route, param: string): Classified {
  if (NOT_AN_ID[route.path] !== undefined) return { ok: true, kind: null };
  if (BY_NAME[param]) return { ok: true, kind: BY_NAME[param]! };
  const segments = route.path.split("/");
  const at = segments.indexOf(`:${param}`);
  const collection = at > 0 ? segments[at - 1]! : "";
  if (BY_COLLECTION[collection]) return { ok: true, kind: BY_COLLECTION[collection]! };
  return { ok: false, why: `path parameter :${param} after "${collection}"` };
}

/** Which of an account's objects a query parameter names; null when it is a filter by value. */
export function queryParamKind(name: string): Classified {
  if (BY_NAME[name]) return { ok: true, kind: BY_NAME[name]! };
  if (NOT_AN_ID_QUERY.has(name)) return { ok: true, kind: null };
  return { ok: false, why: `query parameter ${name}` };
}

/** The id-named properties of a body schema, with what they name. */
export function bodyIdFields(schema: TSchema | null): [string, Kind][] {
  const object = objectOf(schema);
  if (!object) return [];
  return Object.keys(object.properties).flatMap((name) =>
    BY_NAME[name] ? [[name, BY_NAME[name]!] as [string, Kind]] : [],
  );
}

/** The object schema of a body (through t.Optional), or null. */
export function objectOf(
  schema: TSchema | null,
): (TSchema & { properties: Record<string, TSchema>; required?: string[] }) | null {
  return schema && schema[SchemaKind] === "Object" ? (schema as never) : null;
}

export const isOptional = (schema: TSchema) => schema[OptionalKind] === "Optional";

/** Plausible values by property name: what a real client sends, so that a refusal is not about validation. */
export const PLAUSIBLE: Record<string, unknown> = {
  url: "https://example.com/hook",
  fields: ["messages"],
  since: "2020-01-01T00:00:00Z",
  from: "2020-01-01T00:00:00Z",
  sync_type: "contacts",
  pin: "123456",
  mode: "live",
  retention: "24h",
  email: "someone@example.com",
  password: "a-plausible-password",
  name: "Plausible",
  code: "plausible-code",
  access_token: "EAAGplausible",
  app_secret: "plausible-secret",
  user_email: "someone-new@example.com",
  user_password: "a-plausible-password",
};

/** True for a schema of numbers, including Elysia's t.Numeric (a number or a numeric string). */
export function isNumeric(schema: TSchema): boolean {
  if (schema[SchemaKind] === "Number" || schema[SchemaKind] === "Integer") return true;
  const members = (schema as { anyOf?: TSchema[] }).anyOf;
  return !!members && members.some((m) => m.type === "number" || m.type === "integer");
}

/**
 * A valid value of `schema`. An object gets its required properties and the optional ones a client
 * would plausibly send (those PLAUSIBLE names); never an optional id, which a test sets itself.
 */
export function plausible(schema: TSchema, name = "", values: Record<string, unknown> = PLAUSIBLE): unknown {
  if (name in values) return values[name];
  if (isNumeric(schema)) return (schema as { minimum?: number }).minimum ?? 1;
  if ("const" in schema) return schema.const;
  switch (schema[SchemaKind]) {
    case "Object": {
      const object = schema as TSchema & { properties: Record<string, TSchema> };
      return Object.fromEntries(
        Object.entries(object.properties)
          .filter(([key, p]) => !isOptional(p) || key in values)
          .map(([key, p]) => [key, plausible(p, key, values)]),
      );
    }
    case "Union": {
      const members = (schema as TSchema & { anyOf: TSchema[] }).anyOf;
      return plausible(members.find((m) => m[SchemaKind] !== "Null") ?? members[0]!, name, values);
    }
    case "Array":
      return [plausible((schema as TSchema & { items: TSchema }).items, "", values)];
    case "Boolean":
      return false;
    case "Null":
      return null;
    case "String": {
      const s = schema as { minLength?: number; pattern?: string };
      return s.pattern?.includes("0-9]{6}") ? "123456" : "x".repeat(Math.max(s.minLength ?? 1, 1));
    }
    default:
      return null;
  }
}

/**
 * The API route whose body an HTML form post takes. The pages read their forms against the
 * dashboard API's schemas (html/form.ts), which the route table does not show; a page's
 * action posts what the API route doing the same takes: same kind of object and same last word
 * (`/dashboard/numbers/:id/preflight` ↔ `/api/numbers/:phone_number_id/preflight`), or, for an
 * `…/edit` page, the object's PATCH.
 */
export function formTwin(route: Route, routes: Route[]): Route | null {
  const shape = (r: Route) => {
    const last = r.path.split("/").at(-1)!;
    const named = r.params[0] === undefined ? null : pathParamKind(r, r.params[0]);
    return { last: last.startsWith(":") ? "" : last, kind: named?.ok ? named.kind : null };
  };
  const mine = shape(route);
  const apis = routes.filter((r) => r.path.startsWith("/api/") && r.body);
  const twin =
    mine.last === "edit"
      ? apis.find((r) => r.method === "PATCH" && shape(r).kind === mine.kind && shape(r).last === "")
      : apis.find((r) => r.method === route.method && shape(r).kind === mine.kind && shape(r).last === mine.last);
  return twin ?? null;
}

/**
 * The schema a route's body is read against: its own, or for an HTML form, its API twin's (the
 * dashboard's), or the one the operator console names for it (src/console/forms.ts).
 */
export function bodyOf(route: Route, routes: Route[]): TSchema | null {
  if (route.body || route.method === "GET") return route.body;
  if (route.path.startsWith("/operator/")) return CONSOLE_FORMS[route.key] ?? null;
  if (!route.path.startsWith("/dashboard/")) return route.body;
  return formTwin(route, routes)?.body ?? null;
}

/** An HTML form's encoding of a body: arrays as repeated fields. */
export function formEncode(body: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    for (const v of Array.isArray(value) ? value : [value]) form.append(key, String(v));
  }
  return form.toString();
}
