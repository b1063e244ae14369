// Times are Unix epoch milliseconds from the injected clock, never SQL's own now().
export * from "./schema/accounts.ts";
export * from "./schema/numbers.ts";
export * from "./schema/queue.ts";
export * from "./schema/history.ts";
export * from "./schema/service.ts";
