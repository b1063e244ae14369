/**
 * A backup's name: `switchboard-<UTC time to the second>-v<schema version>.tar.zst` (the archive of
 * archive.ts; the release before made `.db.zst`, one database), with `-2`, `-3`… before the
 * extension when two are taken in the same second. Nothing but a name of this shape is ever read,
 * served or deleted as a backup, so no name can reach outside the backups' place.
 */
const BACKUP_NAME = /^switchboard-\d{8}T\d{6}Z-v\d{1,6}(?:-\d{1,4})?\.(?:tar|db)\.zst$/;
const MANIFEST_SUFFIX = ".json";

export const isBackupName = (name: string): boolean => BACKUP_NAME.test(name);

/** The manifest beside a backup (manifest.ts). */
export const manifestName = (backup: string): string => `${backup}${MANIFEST_SUFFIX}`;

/** The backup a manifest's name belongs to, or null when `name` is not a backup's manifest. */
export function backupOfManifest(name: string): string | null {
  if (!name.endsWith(MANIFEST_SUFFIX)) return null;
  const backup = name.slice(0, -MANIFEST_SUFFIX.length);
  return isBackupName(backup) ? backup : null;
}

/** 1 for a backup first in its second, n for its `-n` name. */
export function sequenceInSecond(name: string): number {
  return Number(/-(\d+)\.(?:tar|db)\.zst$/.exec(name)?.[1] ?? 1);
}

/** A new backup's name, taken at `at` (epoch ms), that none of `existing` has. */
export function newBackupName(at: number, schemaVersion: number, existing: readonly string[]): string {
  const stamp = new Date(at)
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replaceAll("-", "")
    .replaceAll(":", "");
  const taken = new Set(existing);
  for (let n = 1; ; n++) {
    const name = `switchboard-${stamp}-v${schemaVersion}${n === 1 ? "" : `-${n}`}.tar.zst`;
    if (!taken.has(name) && !taken.has(manifestName(name))) return name;
  }
}
