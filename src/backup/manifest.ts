import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { sequenceInSecond } from "./names.ts";

/**
 * What a verified backup holds, kept as JSON beside it (`<name>.json`) and printed by `switchboard
 * backup` (docs/operations.md#backups): `bytes` and `sha256` are the stored (compressed) file's, `counts` the rows
 * of each table in the database it decompresses to.
 */
export const manifestSchema = Type.Object({
  name: Type.String(),
  at: Type.String({ description: "When the snapshot was taken (ISO 8601)" }),
  bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  schema_version: Type.Integer({ minimum: 0, description: "How many of the database's migrations were applied" }),
  counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
});

export type Manifest = Static<typeof manifestSchema>;

/** A manifest read back, or null when the text is not one. */
export function parseManifest(text: string): Manifest | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return Value.Check(manifestSchema, value) ? value : null;
}

/** Newest first: by the snapshot's time, then the later of two taken at the same time. */
export function newestFirst(a: Manifest, b: Manifest): number {
  return Date.parse(b.at) - Date.parse(a.at) || sequenceInSecond(b.name) - sequenceInSecond(a.name);
}
