import { bigint, customType } from "drizzle-orm/pg-core";

export const epochMs = (name: string) => bigint(name, { mode: "number" });

/** Event bodies: raw bytes, never re-encoded. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
});
