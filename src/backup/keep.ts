import type { Manifest } from "./manifest.ts";

/** The days back, today included, of which the newest backup is kept whatever BACKUP_KEEP says. */
export const DAILY_DAYS = 7;
const DAY_MS = 86_400_000;

/**
 * Which backups a prune deletes (docs/backups.md#which-backups-are-kept): all but the newest `keep`
 * and, for each of the last DAILY_DAYS UTC days (today and the six before, by `now`), the newest
 * taken that day. So a burst of backups by hand never deletes yesterday's. `manifests`: newest first.
 */
export function backupsToDelete(manifests: readonly Manifest[], keep: number, now: number): Manifest[] {
  const today = Math.floor(now / DAY_MS);
  const daysSeen = new Set<number>();
  return manifests.filter((manifest, index) => {
    const day = Math.floor(Date.parse(manifest.at) / DAY_MS);
    const newestOfRecentDay = day > today - DAILY_DAYS && day <= today && !daysSeen.has(day);
    daysSeen.add(day);
    return index >= keep && !newestOfRecentDay;
  });
}
