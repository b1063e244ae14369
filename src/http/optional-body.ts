import type { TObject } from "@sinclair/typebox";

/**
 * Route options for a JSON object body that may be left out. Elysia does not validate a body
 * declared `t.Optional(schema)` at all (broken JSON, an array, a number or a string reached the
 * handler), so the schema is declared whole and an absent or empty body is read as `{}` before
 * it is validated.
 */
export function optionalBody<S extends TObject>(schema: S) {
  return {
    body: schema,
    transform(context: { body: unknown }) {
      if (context.body === undefined) context.body = {};
    },
  };
}
