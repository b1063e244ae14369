import { sql, type SQLWrapper } from "drizzle-orm";
import type { Recovery } from "./recoveries.ts";

/** A recoveries row as both backends' schemas read it. */
export interface RecoveryRow extends Omit<Recovery, "cursor"> {
  cursorAt: number | null;
  cursorId: string | null;
}

export const toRecoveryRow = ({ cursor, ...r }: Recovery): RecoveryRow => ({
  ...r,
  cursorAt: cursor?.createdAt ?? null,
  cursorId: cursor?.id ?? null,
});

export const fromRecoveryRow = ({ cursorAt, cursorId, ...r }: RecoveryRow): Recovery => ({
  ...r,
  since: Number(r.since),
  until: Number(r.until),
  startedAt: Number(r.startedAt),
  updatedAt: Number(r.updatedAt),
  cursor: cursorAt === null || cursorId === null ? null : { createdAt: Number(cursorAt), id: cursorId },
});

/**
 * A start's conflict clause, on either backend's recoveries table. The start is one statement, so
 * that it always answers: its new row, or the one running (the partial unique index lets one run
 * per endpoint), returned by an update that changes nothing. As an insert and then a read of the
 * running one it found none when that one finished in between.
 */
export const theRunningOne = <C extends SQLWrapper>(table: { endpointId: C; status: SQLWrapper; id: SQLWrapper }) => ({
  target: table.endpointId,
  targetWhere: sql`${table.status} = 'running'`,
  set: { id: sql`${table.id}` },
});

/** What a start answers from the row its statement returned: `asked` when inserted, else the one running. */
export function startAnswer(rows: RecoveryRow[], asked: Recovery): { recovery: Recovery; started: boolean } {
  const [row] = rows;
  // Inserted or updated, the statement returns one row.
  if (!row) throw new Error(`The start of a recover of endpoint ${asked.endpointId} returned no row.`);
  return { recovery: fromRecoveryRow(row), started: row.id === asked.id };
}
