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
