import { t } from "elysia";

/** The largest value of an integer column (PostgreSQL's `integer`): an error code, a status. */
export const MAX_INTEGER_COLUMN = 2 ** 31 - 1;

/**
 * A whole number given as query text ("25"), within bounds. Elysia's t.Numeric alone admits "1.5",
 * which a LIMIT or an integer column refuses with a database error (a 500).
 */
export const wholeNumber = (bounds: { minimum: number; maximum: number }) => t.Numeric({ ...bounds, multipleOf: 1 });
