import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { sentenceOf } from "../http/rules.ts";

/**
 * Reads an HTML form post against the same TypeBox schema the JSON API validates with, so a
 * dashboard form and its API call accept exactly the same input. Empty optional fields count as
 * absent, and text is trimmed except a password; `arrays` names checkbox groups, which arrive as one string when one box is ticked.
 */
export type FormResult<T> =
  | { ok: true; value: T }
  | { ok: false; errors: Record<string, string>; raw: Record<string, unknown> };

export function readForm<S extends TSchema>(
  schema: S,
  body: unknown,
  arrays: readonly string[] = [],
): FormResult<Static<S>> {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(formFields(body))) {
    if (value === "") continue;
    // A password is taken as typed, as the JSON API and the CLI take it.
    raw[key] = typeof value === "string" && !key.endsWith("password") ? value.trim() : value;
  }
  for (const key of arrays) {
    const value = raw[key];
    raw[key] = value === undefined ? [] : Array.isArray(value) ? value : [value];
  }
  if (Value.Check(schema, raw)) return { ok: true, value: raw as Static<S> };
  const errors: Record<string, string> = {};
  for (const error of Value.Errors(schema, raw)) {
    const field = error.path.split("/")[1] ?? "";
    // The rule it broke, in the API's words, as a sentence beside the field.
    errors[field] ??= sentenceOf(error);
  }
  return { ok: false, errors, raw };
}

/**
 * The fields of a post. A page's form posts an object; a JSON body that is a string, an array or a
 * number has no fields (spread, a 1 MB string would become a million of them).
 */
export function formFields(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
