import { Kind, type TSchema } from "@sinclair/typebox";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/value";

/**
 * The one mapping from the schema library's errors (TypeBox, through Elysia) to words a person
 * reads (docs/errors.md#api-errors): each names the rule the value broke, with the allowed values,
 * the length or the format. The API prefixes the field (`body field email: must be …`), the CLI
 * its flag, a form shows it beside the field as a sentence. Nothing says "Expected union value".
 */

/** The patterns our schemas use, in words. */
const PATTERNS: Record<string, string> = {
  "^[0-9A-Za-z_-]+$": "may hold only letters, digits, - and _",
  "^[0-9]{6}$": "must be 6 digits",
  "^[0-9a-f]{64}$": "must be 64 lowercase hexadecimal digits",
};

const FORMATS: Record<string, string> = {
  email: "must be an email address, like name@example.com",
  "date-time": "must be an ISO 8601 date and time, like 2026-11-24T10:00:00Z",
  date: "must be a date, like 2026-11-24",
  uri: "must be a URL, like https://example.com/hook",
};

type Schema = TSchema & Record<string, unknown>;

const quoted = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(", ");
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** What a schema admits, in words ("a whole number from 0 to 10", "one of …"), for a union's members. */
function admits(schema: Schema): string {
  if ("const" in schema) return JSON.stringify(schema.const);
  switch (schema[Kind]) {
    case "Null":
      return "null";
    case "Boolean":
      return "true or false";
    case "Integer":
    case "Number": {
      const what = schema[Kind] === "Integer" || schema.multipleOf === 1 ? "a whole number" : "a number";
      const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
      if (minimum !== undefined && maximum !== undefined) return `${what} from ${minimum} to ${maximum}`;
      if (minimum !== undefined) return `${what} of at least ${minimum}`;
      return maximum !== undefined ? `${what} of at most ${maximum}` : what;
    }
    case "String":
      return "text";
    case "Array":
      return "a list";
    case "Object":
      return "an object";
    case "Union":
      return oneOf(schema.anyOf as Schema[]);
    default:
      return "a value of another kind";
  }
}

/** A union's choices: `one of "a", "b"` when they are all fixed values, else each kind joined with "or". */
function oneOf(members: Schema[]): string {
  if (members.every((m) => "const" in m)) return `one of ${quoted(members.map((m) => m.const))}`;
  return members.map(admits).join(", or ");
}

/** The object's fields, for an unknown one: the ones it does take. */
function fieldsOf(schema: Schema): string {
  const names = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
  return names.length === 0 ? "it takes none" : `the fields are ${names.join(", ")}`;
}

/** The rule `error` says the value broke, as "must …" or "is …" (no field, no full stop). */
export function ruleOf(error: Pick<ValueError, "type" | "schema" | "value" | "message">): string {
  const schema = error.schema as Schema;
  const n = (key: string) => schema[key] as number;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.ObjectAdditionalProperties:
      return `is not a field of this request (${fieldsOf(schema)})`;
    case ValueErrorType.Union:
      return `must be ${oneOf(schema.anyOf as Schema[])}`;
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(schema.const)}`;
    case ValueErrorType.StringMinLength:
      return n("minLength") === 1
        ? "must not be empty"
        : `must be at least ${plural(n("minLength"), "character")} long`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${plural(n("maxLength"), "character")} long`;
    case ValueErrorType.StringFormat:
      return FORMATS[schema.format as string] ?? `must be in the ${schema.format} format`;
    case ValueErrorType.StringPattern:
      return PATTERNS[schema.pattern as string] ?? `must match the pattern ${schema.pattern}`;
    case ValueErrorType.ArrayMinItems:
      return `must hold at least ${plural(n("minItems"), "item")}`;
    case ValueErrorType.ArrayMaxItems:
      return `must hold at most ${plural(n("maxItems"), "item")}`;
    case ValueErrorType.ArrayUniqueItems:
      return "must not hold the same item twice";
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${n("minimum")}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${n("maximum")}`;
    case ValueErrorType.NumberMultipleOf:
    case ValueErrorType.IntegerMultipleOf:
      return n("multipleOf") === 1 ? "must be a whole number" : `must be a multiple of ${n("multipleOf")}`;
    case ValueErrorType.String:
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
    case ValueErrorType.Boolean:
    case ValueErrorType.Null:
    case ValueErrorType.Array:
    case ValueErrorType.Object:
      return `must be ${admits(schema)}`;
    default:
      return error.message;
  }
}

/** `/fields/0` → `fields[0]`, `/metadata/name` → `metadata.name`: a field as a reader writes it. */
export function fieldOf(path: string): string {
  return path
    .split("/")
    .slice(1)
    .map((step, i) => (/^\d+$/.test(step) ? `[${step}]` : `${i === 0 ? "" : "."}${step.replaceAll("~1", "/")}`))
    .join("");
}

/** The rule as a sentence, for a form that shows it beside its field ("Must be at least 10 characters long."). */
export function sentenceOf(error: Parameters<typeof ruleOf>[0]): string {
  const rule = ruleOf(error);
  return rule.startsWith("is ") ? `This ${rule}.` : `${rule.charAt(0).toUpperCase()}${rule.slice(1)}.`;
}
