import type { Retention } from "./types.ts";

/**
 * Deletions of what is past its keeping, one method per table (src/retention/ says how long each
 * is kept and runs them). Each deletes in transactions of at most `batch` rows and lets other work
 * run between them, and is idempotent: run by several instances at once, each row goes once.
 * Returns how many rows it removed. (The request log's purges are on RequestLogStore: it is a
 * store of its own, written on a thread or connection of its own.)
 */
export interface RetentionStore {
  /**
   * Deletes deliveries (with attempts) older than their account's retention, then events older
   * than it that no remaining delivery refers to (their payloads with them), and hourly stats of
   * hours wholly past it.
   */
  purgeWebhookHistory(
    now: number,
    retentionMs: Record<Retention, number>,
    batch: number,
  ): Promise<{ deliveries: number; events: number }>;
  /** Deletes sessions whose expiry is at or before `now`. */
  purgeSessions(now: number, batch: number): Promise<number>;
  /** Forgets the sign-in attempt counts whose window began before `before`. */
  purgeSignInCounts(before: number, batch: number): Promise<number>;
  /** Deletes operators' sessions whose expiry is at or before `now`. */
  purgeOperatorSessions(now: number, batch: number): Promise<number>;
  /**
   * Deletes unfinished onboardings expired at `now`, and drops the code, token and PIN of finished
   * ones whose later run expired (their record stays: a retry knows the run lapsed); counts both.
   */
  purgeOnboardings(now: number, batch: number): Promise<number>;
  /** Deletes the hourly counts of upstream events of hours that start before `before`. */
  purgeEventCounts(before: number, batch: number): Promise<number>;
  /**
   * Deletes audit log entries older than `before` (AUDIT_RETENTION), and an account's entries but
   * its operators' (OPERATOR_ACTORS) older than `keptMs` of its retention at `now`.
   */
  purgeAudit(before: number, now: number, keptMs: Record<Retention, number>, batch: number): Promise<number>;
  /** Deletes finished bulk recovers whose last progress is older than their account's retention. */
  purgeRecoveries(now: number, retentionMs: Record<Retention, number>, batch: number): Promise<number>;
}
