/** A time as every JSON answer (operator API, dashboard API, CLI) writes it: ISO 8601 in UTC; none stays null. */
export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
