import { MAX_TIME_MS } from "./time-param.ts";

/**
 * A time as every JSON answer (operator API, dashboard API, CLI) writes it: ISO 8601 in UTC; none
 * stays null. A time no date holds (a recover's `since` stored before times were checked, issue 26)
 * is null too: toISOString would throw, and answer 500.
 */
export const iso = (ms: number | null) =>
  ms === null || !(Math.abs(ms) <= MAX_TIME_MS) ? null : new Date(ms).toISOString();
