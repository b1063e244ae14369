/**
 * The parts of Elysia's context a named route handler reads, typed by the route's schemas: a
 * handler declares only what it uses, so a route table can list handlers by name.
 */
export interface RouteContext<Params = Record<string, string>, Body = unknown, Query = Record<string, unknown>> {
  params: Params;
  body: Body;
  query: Query;
  set: { status?: number | string };
}
