import type { TablePlan } from "./tables.ts";

type Value = string | number | boolean | null | string[] | Uint8Array;

const INT4 = 2 ** 31;
const INT8 = 2n ** 63n;

/** A value PostgreSQL's column cannot take, with why, in words. */
export class UncopyableValue extends Error {}

/** A row a move cannot copy: the table, the row's id and the column, named for the operator to mend or delete. */
export class UncopyableRowError extends Error {
  constructor(
    readonly table: string,
    readonly rowId: string,
    readonly column: string,
    reason: string,
  ) {
    super(`${table} row ${rowId}: column ${column} ${reason}`);
    this.name = "UncopyableRowError";
  }
}

function wholeNumber(value: Value, pgType: string, limit: bigint): number {
  const fits = typeof value === "number" && Number.isInteger(value) && BigInt(value) >= -limit && BigInt(value) < limit;
  if (!fits)
    throw new UncopyableValue(
      `holds ${typeof value === "number" ? value : JSON.stringify(value)}, which is not a whole number PostgreSQL's ${pgType} can hold`,
    );
  return value as number;
}

function text(value: Value): Value {
  if (typeof value === "string" && value.includes("\0"))
    throw new UncopyableValue("holds a NUL character, which PostgreSQL's text cannot hold");
  return value;
}

/**
 * One SQLite value as PostgreSQL's text input takes it inside a JSON row (json_populate_recordset):
 * 0/1 becomes a boolean, a JSON list text an array, a blob the bytea hex form. Everything else
 * (text, epoch-ms integers, reals) is the same value on both sides. Sealed secrets are text and
 * pass as they are: they stay sealed under the same ENCRYPTION_KEY. SQLite keeps whatever it was
 * given (a real in an integer column, a NUL in text): such a value is refused here, by name,
 * rather than by the driver halfway through the move.
 */
function pgValue(value: Value, pgType: string): unknown {
  if (value === null) return null;
  switch (pgType) {
    case "boolean":
      return value === 1 || value === true;
    case "bigint":
      return wholeNumber(value, pgType, INT8);
    case "integer":
      return wholeNumber(value, pgType, BigInt(INT4));
    case "double precision":
      if (typeof value !== "number" || !Number.isFinite(value))
        throw new UncopyableValue(`holds ${String(value)}, which is not a finite number`);
      return value;
    case "text":
      return text(value);
    case "ARRAY": {
      const list = typeof value === "string" ? JSON.parse(value) : value;
      for (const item of list as string[]) text(item);
      return list;
    }
    case "bytea":
      return `\\x${Buffer.from(value as Uint8Array).toString("hex")}`;
    default:
      return value;
  }
}

/** One SQLite row as a JSON object of the PostgreSQL insert's input; `rowId` names the row if a value cannot be copied. */
export function rowAsJson(row: Record<string, Value>, plan: TablePlan, rowId: () => string): string {
  const out: Record<string, unknown> = {};
  for (const column of plan.columns) {
    try {
      out[column.name] = pgValue(row[column.name] ?? null, column.pgType);
    } catch (error) {
      const reason = error instanceof UncopyableValue ? error.message : `cannot be read (${(error as Error).message})`;
      throw new UncopyableRowError(plan.name, rowId(), column.name, reason);
    }
  }
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
