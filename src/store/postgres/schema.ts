// The tables of src/store/sqlite/schema.ts, for the scale-out mode. Times are Unix epoch
// milliseconds from the injected clock (bigint read as a JS number), never SQL's own now().
// Field lists are text[] rather than jsonb: Bun's client stores a JSON text bound to a jsonb
// parameter as a JSON string (bench/RESULTS.md, "PostgreSQL driver").
export * from "./schema/accounts.ts";
export * from "./schema/numbers.ts";
export * from "./schema/queue.ts";
export * from "./schema/history.ts";
export * from "./schema/service.ts";
export * from "./schema/columns.ts";
