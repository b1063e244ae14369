import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { backupOfManifest, sequenceInSecond } from "./names.ts";
import type { BackupTarget } from "./target.ts";

/**
 * What a verified backup holds, kept as JSON beside it (`<name>.json`) and printed by `switchboard
 * backup` (docs/backups.md#whats-in-a-backup): `bytes` and `sha256` are the stored (compressed)
 * file's, `uncompressed_bytes` the archive's it decompresses to, `counts` the rows of each table of
 * the database and of the request log, and `mac` authenticates every other field (manifest-mac.ts).
 * A backup of the release before (one database, no request log) has neither `mac` nor
 * `uncompressed_bytes` nor `request_log_version`.
 */
export const manifestSchema = Type.Object({
  name: Type.String(),
  at: Type.String({ description: "When the snapshot began (ISO 8601)" }),
  bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  uncompressed_bytes: Type.Optional(
    Type.Integer({ minimum: 0, description: "What the file decompresses to: restore stops there" }),
  ),
  schema_version: Type.Integer({ minimum: 0, description: "How many of the database's migrations were applied" }),
  request_log_version: Type.Optional(
    Type.Integer({ minimum: 0, description: "The request log file's schema version (its user_version)" }),
  ),
  counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  mac: Type.Optional(
    Type.String({
      pattern: "^[0-9a-f]{64}$",
      description: "HMAC-SHA256 of the other fields under a key derived from ENCRYPTION_KEY",
    }),
  ),
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

/** Every backup at `target` with a manifest that reads as one, newest first; `unreadable` hears of the others. */
export async function listManifests(target: BackupTarget, unreadable: (name: string) => void): Promise<Manifest[]> {
  const found: Manifest[] = [];
  for (const name of await target.list()) {
    const backup = backupOfManifest(name);
    if (backup === null) continue;
    const text = await target.readText(name);
    const manifest = text === null ? null : parseManifest(text);
    if (manifest?.name === backup) found.push(manifest);
    else if (text !== null) unreadable(name);
  }
  return found.sort(newestFirst);
}
