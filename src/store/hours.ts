/** An hour, in ms: hourly counters (deliveries' stats, usage per number) are kept per hour. */
export const HOUR = 3_600_000;

/** The start of the hour `at` falls in (UTC, epoch ms): the key of an hourly counter. */
export function hourOf(at: number): number {
  return Math.floor(at / HOUR) * HOUR;
}
