import type { Server } from "bun";

/** The parts of Elysia's context that page handlers use. */
export interface PageContext {
  request: Request;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
  server: Pick<Server<unknown>, "requestIP"> | null;
}
