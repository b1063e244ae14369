import type { Retention } from "./types.ts";

/** Deletions of what has outlived its account's retention. */
export interface RetentionStore {
  /**
   * Deletes deliveries (with attempts) older than their account's retention, then events older
   * than it that no remaining delivery refers to, and hourly stats of hours wholly past it. Works in
   * bounded batches, letting other work run between them; returns what it removed.
   */
  purgeWebhookHistory(
    now: number,
    retentionMs: Record<Retention, number>,
  ): Promise<{ deliveries: number; events: number }>;
}
