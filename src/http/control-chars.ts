import { Elysia } from "elysia";
import { AppError } from "../errors/catalog.ts";

/** C0 controls and DEL: no id, filter or name means one, and PostgreSQL's text cannot hold NUL. */
const isControl = (code: number) => code < 0x20 || code === 0x7f;
/** In a body's strings a tab and a line break are text (an address, a note); the rest is refused as in parameters. */
const isControlInText = (code: number) => isControl(code) && code !== 0x09 && code !== 0x0a && code !== 0x0d;

function holds(text: string, control: (code: number) => boolean): boolean {
  for (let i = 0; i < text.length; i++) if (control(text.charCodeAt(i))) return true;
  return false;
}

const refuse = (what: string) =>
  new AppError("invalid_request", `${what} must not contain a control character (such as NUL).`);

function checkParameters(
  kind: "query parameter" | "path parameter",
  values: Record<string, unknown> | undefined,
): void {
  for (const [name, value] of Object.entries(values ?? {})) {
    if (holds(name, isControl)) throw refuse(`A ${kind}'s name`);
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one === "string" && holds(one, isControl)) throw refuse(`${kind} ${name}`);
    }
  }
}

/** The first string of a parsed body (keys included) with a control character, named as `fields[1]` or `a.b`. */
function checkBody(value: unknown, path: string): void {
  if (typeof value === "string") {
    if (holds(value, isControlInText)) throw refuse(`body field ${path || "(the whole body)"}`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) checkBody(item, `${path}[${i}]`);
  } else if (value !== null && typeof value === "object" && !(value instanceof Blob)) checkFields(value, path);
}

/** An object's field names, then each field's value. */
function checkFields(value: object, path: string): void {
  for (const [key, item] of Object.entries(value)) {
    if (holds(key, isControlInText)) throw refuse(`A body field's name${path ? ` in ${path}` : ""}`);
    checkBody(item, path ? `${path}.${key}` : key);
  }
}

/**
 * Every route's path and query parameters, and the strings of its parsed body (JSON or form), are
 * refused with 400 naming the parameter or field when they hold a control character, before
 * validation and before any of them reaches a query. A JSON body's depth is bounded already
 * (request-body.ts), so the walk is too.
 */
export function controlCharacterGuard() {
  return new Elysia({ name: "control-character-guard" }).onTransform({ as: "global" }, ({ params, query, body }) => {
    checkParameters("path parameter", params);
    checkParameters("query parameter", query);
    checkBody(body, "");
  });
}
