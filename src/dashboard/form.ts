import type { Static, TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType, type ValueError } from "@sinclair/typebox/value";

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
    errors[field] ??= describe(error);
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

function describe(error: ValueError): string {
  const schema = error.schema as { minLength?: number; maxLength?: number; minItems?: number; maxItems?: number };
  if (error.value === undefined) return "This is required.";
  if (error.type === ValueErrorType.StringPattern) return "Use only letters, digits, - and _.";
  if (schema.minLength !== undefined && typeof error.value === "string" && error.value.length < schema.minLength)
    return "This is required.";
  if (schema.maxLength !== undefined && typeof error.value === "string" && error.value.length > schema.maxLength)
    return `At most ${schema.maxLength} characters.`;
  if (schema.minItems !== undefined && Array.isArray(error.value) && error.value.length < schema.minItems)
    return `Choose at least ${schema.minItems}.`;
  if (schema.maxItems !== undefined && Array.isArray(error.value) && error.value.length > schema.maxItems)
    return `Choose at most ${schema.maxItems}.`;
  return error.message;
}
