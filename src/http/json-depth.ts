import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-bytes.ts";

/** How deep a JSON body may nest: no route takes more than a few levels; a deeper body is refused before it is parsed. */
export const MAX_JSON_DEPTH = 32;

/**
 * Does this JSON text (UTF-8) nest arrays and objects deeper than `max`? One pass over its bytes,
 * with no recursion, so that a body of 500,000 nested arrays costs a scan, not a stack overflow in
 * whatever walks the parsed value (validation, its error message). Brackets inside strings do not
 * count; the text need not be valid JSON (the parser judges that afterwards).
 */
export function nestsDeeperThan(json: Uint8Array, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === QUOTE) i = closingQuote(json, i);
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** Where the string opened at `open` ends: its closing quote, or the end of the text when it has none. */
function closingQuote(json: Uint8Array, open: number): number {
  for (let i = open + 1; i < json.length; i++) {
    const c = json[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return json.length;
}
