import type { AuditChanges } from "../store/audit.ts";

/** What an entry says of a secret that changed: never its value, nor anything derived from it. */
export const SECRET_CHANGED = "[secret changed]";
/** What it says a secret was before it changed. */
export const SECRET_BEFORE = "[secret]";

/**
 * A field whose value is a secret or derived from one, by the last word of its name: tokens, app
 * and signing secrets, passwords, PINs, keys and every hash; and an authorization `code`.
 */
const SECRET_WORDS = new Set(["secret", "token", "password", "hash", "pin", "key"]);
const words = (field: string) => field.split(/(?=[A-Z])|_/).map((w) => w.toLowerCase());
export const isSecret = (field: string) => field === "code" || SECRET_WORDS.has(words(field).at(-1) ?? "");

/** Bookkeeping every write touches, and what the entry names already (its object, its account). */
const UNRECORDED = new Set(["updatedAt", "createdAt", "id", "accountId"]);

/** A record's field as the API names it. */
const apiName = (field: string) => words(field).join("_");

/** Times (`…At`) as ISO text, as every answer shows them. */
function shown(field: string, value: unknown): unknown {
  if (value === undefined) return null;
  return words(field).at(-1) === "at" && typeof value === "number" ? new Date(value).toISOString() : value;
}

/** One field's change as an entry shows it: a secret's as whether there was one and whether there is. */
const changed = (field: string, prev: unknown, next: unknown): AuditChanges[string] =>
  isSecret(field)
    ? [prev === null ? null : SECRET_BEFORE, next === null ? null : SECRET_CHANGED]
    : [shown(field, prev), shown(field, next)];

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The fields `after` sets that differ from `before` (null: a record created), each as
 * [before, after] under its API name: `after` is a patch or a whole new record. A secret is never
 * shown: a changed one reads [SECRET_BEFORE, SECRET_CHANGED] (null for none).
 */
export function changesOf(before: object | null, after: object): AuditChanges {
  const was = (before ?? {}) as Record<string, unknown>;
  const changes: AuditChanges = {};
  for (const [field, next] of Object.entries(after)) {
    if (next === undefined || UNRECORDED.has(field)) continue;
    const prev = was[field] ?? null;
    if (same(prev, next)) continue;
    changes[apiName(field)] = changed(field, prev, next);
  }
  return changes;
}

/** A record deleted: each field it had as [before, null], its secrets left out. */
export function removedOf(record: object): AuditChanges {
  const changes: AuditChanges = {};
  for (const [field, was] of Object.entries(record)) {
    if (was === null || was === undefined || UNRECORDED.has(field) || isSecret(field)) continue;
    changes[apiName(field)] = [shown(field, was), null];
  }
  return changes;
}

/** The longest text an entry keeps of a value: a longer one is cut here, with a marker of its length. */
export const KEPT_CHARACTERS = 200;

function bounded(value: unknown): unknown {
  if (typeof value === "string")
    return value.length > KEPT_CHARACTERS ? `${value.slice(0, KEPT_CHARACTERS)}… [${value.length} characters]` : value;
  if (Array.isArray(value)) return value.map(bounded);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bounded(v)]));
  return value;
}

/**
 * Changes as an entry keeps them: every text longer than KEPT_CHARACTERS cut short with a marker, so
 * no change makes a large entry. Secrets are replaced before (changesOf), so a cut never shows one.
 */
export const boundedChanges = (changes: AuditChanges) => bounded(changes) as AuditChanges;
