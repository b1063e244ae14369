import type { TablePlan } from "./tables.ts";

type Value = string | number | boolean | null | string[] | Uint8Array;

/**
 * One SQLite value as PostgreSQL's text input takes it inside a JSON row (json_populate_recordset):
 * 0/1 becomes a boolean, a JSON list text an array, a blob the bytea hex form. Everything else
 * (text, epoch-ms integers, reals) is the same value on both sides. Sealed secrets are text and
 * pass as they are: they stay sealed under the same ENCRYPTION_KEY.
 */
function pgValue(value: Value, pgType: string): unknown {
  if (value === null) return null;
  switch (pgType) {
    case "boolean":
      return value === 1 || value === true;
    case "ARRAY":
      return typeof value === "string" ? JSON.parse(value) : value;
    case "bytea":
      return `\\x${Buffer.from(value as Uint8Array).toString("hex")}`;
    default:
      return value;
  }
}

/** One SQLite row as a JSON object of the PostgreSQL insert's input. */
export function rowAsJson(row: Record<string, Value>, plan: TablePlan): string {
  const out: Record<string, unknown> = {};
  for (const column of plan.columns) out[column.name] = pgValue(row[column.name] ?? null, column.pgType);
  return JSON.stringify(out);
}

/** Groups rows' JSON into arrays of at most `maxBytes` of text each (a larger row goes alone). */
export function* jsonBatches(rows: string[], maxBytes: number): Generator<{ json: string; rows: number }> {
  let batch: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    if (batch.length > 0 && bytes + row.length + 1 > maxBytes) {
      yield { json: `[${batch.join(",")}]`, rows: batch.length };
      batch = [];
      bytes = 2;
    }
    batch.push(row);
    bytes += row.length + 1;
  }
  if (batch.length > 0) yield { json: `[${batch.join(",")}]`, rows: batch.length };
}
