import type { Backups } from "../backup/backups.ts";
import type { Manifest } from "../backup/manifest.ts";

/**
 * Backups as the console shows them (docs/backups.md): read from wherever BACKUP_TO points, so
 * backups this server did not take (the CLI's, another server's before a restart) count too. Null
 * where the database is not a SQLite file.
 */
export type BackupState = {
  schedule: string | null;
  /** Where the backups were looked for: BACKUP_TO's directory or s3://bucket/prefix. */
  location: string;
  /** The verified backups there, newest first (empty when they could not be listed). */
  backups: Manifest[];
  /** When the newest verified backup's snapshot began (this server's last one, when they could not be listed). */
  last: { at: number; name: string } | null;
  /** When the last failure was, and at which stage. */
  failure: { at: number; stage: string; error: string } | null;
  /** The backup under way here, if any. */
  running: { name: string | null; at: number; step: string } | null;
  /** Why the backups could not be listed; null when they could. */
  unlisted: string | null;
} | null;

export async function backupState(backups: Backups | null, schedule: string | null): Promise<BackupState> {
  if (backups === null) return null;
  let listed: Manifest[] = [];
  let unlisted: string | null = null;
  try {
    listed = await backups.list();
  } catch (error) {
    unlisted = (error as Error).message;
  }
  const newest = listed[0] ?? (unlisted === null ? null : backups.lastSuccess());
  const failure = backups.lastFailure();
  const running = backups.current();
  return {
    schedule,
    location: backups.target.where,
    backups: listed,
    last: newest && { at: Date.parse(newest.at), name: newest.name },
    failure: failure && { at: Date.parse(failure.at), stage: failure.stage, error: failure.error },
    running: running && { name: running.name, at: Date.parse(running.at), step: running.step },
    unlisted,
  };
}
