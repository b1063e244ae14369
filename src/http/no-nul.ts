import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";

/** True when a parsed body holds a NUL character in any text or key; walked without recursion, however deep. */
export function holdsNul(body: unknown): boolean {
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (value.includes("\u0000")) return true;
    } else if (Array.isArray(value)) {
      for (const inner of value) stack.push(inner);
    } else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) {
        if (key.includes("\u0000")) return true;
        stack.push(inner);
      }
    }
  }
  return false;
}

/**
 * Refuses a JSON or form body with a NUL character anywhere, before validation: PostgreSQL's text
 * holds none (a name with one answered 500 there and was stored on SQLite), and no field needs one.
 * Ingress reads its own body (its event is relayed byte for byte) and never gets here.
 */
export function noNul() {
  return new Elysia({ name: "no-nul" }).onTransform({ as: "global" }, ({ body }) => {
    if (holdsNul(body)) throw new AppError("invalid_request", "The body holds a NUL character, which no field takes.");
  });
}
