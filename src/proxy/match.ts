import { MEDIA_SCOPE_PARAM, type Route } from "./allow-list.ts";

/** A request whose method, path shape and edge fit at least one allow-list row. */
export interface Match {
  version: string;
  id: string;
  /** Rows that fit, in allow-list order; ownership (a later step) picks the first whose id kind fits. */
  routes: Route[];
  /** The `phone_number_id` parameter, when a media row is among `routes`. */
  scopeNumberId: string | null;
}

const VERSION = /^v\d{1,4}\.0$/;
// Upstream ids are numeric; we also accept the letters, `_` and `-` our operator API allows.
// Nothing that a server or upstream could decode into another path (`%`, `.`, `/`) gets through.
const ID = /^[0-9A-Za-z_-]{1,64}$/;

/** The value of `name` in a raw query when it occurs exactly once, else null. */
function singleParam(rawQuery: string | null, name: string): string | null {
  if (!rawQuery) return null;
  const values = new URLSearchParams(rawQuery).getAll(name);
  return values.length === 1 ? (values[0] ?? null) : null;
}

/**
 * A match with media rows once they have their scope: without a valid, single `phone_number_id`
 * a media row does not fit.
 */
function scoped(match: Match, rawQuery: string | null): Match | null {
  const scopeNumberId = singleParam(rawQuery, MEDIA_SCOPE_PARAM);
  if (scopeNumberId !== null && ID.test(scopeNumberId)) return { ...match, scopeNumberId };
  const routes = match.routes.filter((r) => r.id !== "media");
  return routes.length === 0 ? null : { ...match, routes };
}

/**
 * Step 1 of docs/proxy.md#order-of-checks for an allow-list: a function that takes `/{version}/{id}` or
 * `/{version}/{id}/{edge}` with a method and edge on the list (and, for media calls, the scoping
 * parameter) to its rows. Pure; null means 404.
 */
export function routeMatcher(allowList: readonly Route[]) {
  // Rows by method and edge, in allow-list order (looked up on every request).
  const rows = new Map<string, Route[]>();
  for (const route of allowList) {
    const key = `${route.method} ${route.edge ?? ""}`;
    rows.set(key, [...(rows.get(key) ?? []), route]);
  }
  return function matchRoute(method: string, path: string, rawQuery: string | null): Match | null {
    const parts = path.split("/");
    if (parts.length < 3 || parts.length > 4 || parts[0] !== "") return null;
    const [, version, id, edge = null] = parts as [string, string, string, string?];
    if (!VERSION.test(version) || !ID.test(id)) return null;
    // An empty edge (a trailing "/") matches no row: it must not be read as the object itself.
    if (edge === "") return null;
    const routes = rows.get(`${method} ${edge ?? ""}`);
    if (!routes) return null;
    const match = { version, id, routes, scopeNumberId: null };
    return routes.some((r) => r.id === "media") ? scoped(match, rawQuery) : match;
  };
}
