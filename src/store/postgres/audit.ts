import { desc, eq } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { SQL } from "bun";
import { auditConditions } from "../audit-filter.ts";
import {
  ACCOUNT_HOURLY_ENTRIES,
  auditRow,
  capWindow,
  windowCondition,
  fromAuditRow,
  NOT_RECORDED,
  overflowEntry,
  type AuditEntry,
  type AuditFilter,
  type AuditStore,
} from "../audit.ts";
import { transaction, type PgDb, type Tx } from "./connect.ts";
import { auditLog } from "./schema.ts";

const COLUMNS = "id, at, actor_kind, actor_id, actor_email, action, object_kind, object_id, account_id, ip, changes";

function values(e: AuditEntry): unknown[] {
  const r = auditRow(e);
  return [
    r.id,
    r.at,
    r.actorKind,
    r.actorId,
    r.actorEmail,
    r.action,
    r.objectKind,
    r.objectId,
    r.accountId,
    r.ip,
    r.changes,
  ];
}

/** `count` placeholders numbered from `after + 1`. */
const placeholders = (count: number, after: number) =>
  Array.from({ length: count }, (_, i) => `$${after + i + 1}`).join(", ");

/** Adds one to an `audit.capped` entry's count (its changes are JSON text). */
const COUNT_ONE_MORE = `'{"${NOT_RECORDED}":[null,' || ((audit_log.changes::json #>> '{${NOT_RECORDED},1}')::int + 1) || ']}'`;

/**
 * The statement parts that write `entry` (its parameters numbered from `after + 1`) when `when`
 * holds: its CTEs and its last INSERT. An account's own user's entry past the hourly figure is
 * counted in the hour's overflow entry instead, decided in the same statement (on PostgreSQL two
 * writes at once may each see the figure not reached: a few over it, never without bound).
 */
function entryStatement(entry: AuditEntry, after: number, when: string) {
  const window = capWindow(entry);
  const insert = (from: number) => `INSERT INTO audit_log (${COLUMNS}) SELECT ${placeholders(11, after + from)}`;
  if (!window) return { ctes: [], last: `${insert(0)} WHERE ${when}`, params: values(entry) };
  const counted = "(SELECT n FROM counted)";
  return {
    ctes: [
      `counted AS (SELECT count(*) AS n FROM audit_log WHERE ${windowCondition(window, {
        accountId: `$${after + 23}::text`,
        since: `$${after + 24}::bigint`,
        failedSignIns: `$${after + 25}::boolean`,
      })})`,
      `own AS (${insert(0)} WHERE ${when} AND ${counted} < ${ACCOUNT_HOURLY_ENTRIES})`,
    ],
    last: `${insert(11)} WHERE ${when} AND ${counted} >= ${ACCOUNT_HOURLY_ENTRIES}
      ON CONFLICT (id) DO UPDATE SET changes = ${COUNT_ONE_MORE}`,
    params: [
      ...values(entry),
      ...values(overflowEntry(entry, window)),
      window.accountId,
      window.since,
      window.failedSignIns,
    ],
  };
}

const withCtes = (ctes: string[], last: string) => (ctes.length === 0 ? last : `WITH ${ctes.join(", ")} ${last}`);

/** Writes an entry in the transaction `tx` (nothing when none is given). */
export async function recordAudit(tx: Pick<SQL, "unsafe">, entry: AuditEntry | undefined): Promise<void> {
  if (!entry) return;
  const { ctes, last, params } = entryStatement(entry, 0, "TRUE");
  await tx.unsafe(withCtes(ctes, last), params);
}

/** A statement drizzle built, to run as it is or inside a larger one. */
interface Built extends PromiseLike<unknown> {
  toSQL(): { sql: string; params: unknown[] };
}

/**
 * Runs `change` (one INSERT, UPDATE or DELETE … RETURNING) and writes its entry, when there is one
 * and `change` touched a row, in ONE statement (a data-modifying WITH is atomic as a transaction):
 * one round trip, where a transaction takes three more. For the changes that are one statement
 * of their own and come often (sign-ins).
 */
export async function withAuditStatement(db: PgDb, change: Built, entry: AuditEntry | undefined): Promise<void> {
  if (!entry) {
    await change;
    return;
  }
  const { sql: text, params } = change.toSQL();
  const written = entryStatement(entry, params.length, "EXISTS (SELECT 1 FROM change)");
  await db.$client.unsafe(withCtes([`change AS (${text})`, ...written.ctes], written.last), [
    ...params,
    ...written.params,
  ]);
}

/**
 * Runs `write` with its entry in one transaction, the entry written only when `wrote` says the
 * write changed something; with no entry, `write` runs alone (one statement, no transaction).
 */
export async function withAudit<T>(
  db: PgDb,
  entry: AuditEntry | undefined,
  write: (orm: Pick<Tx["orm"], "insert" | "update" | "delete">) => Promise<T>,
  wrote: (result: T) => boolean = () => true,
): Promise<T> {
  if (!entry) return write(db);
  return transaction(db, async (tx) => {
    const result = await write(tx.orm);
    if (wrote(result)) await recordAudit(tx.raw, entry);
    return result;
  });
}

export class PgAudit implements AuditStore {
  constructor(private readonly db: PgDb) {}

  record(entry: AuditEntry) {
    return recordAudit(this.db.$client, entry);
  }

  async list(filter: AuditFilter, limit: number) {
    const rows = await this.db
      .select()
      .from(auditLog)
      .where(auditConditions(auditLog, filter))
      .orderBy(desc(auditLog.at), desc(auditLog.id))
      .limit(limit);
    return rows.map(fromAuditRow);
  }
}

/**
 * Deletes the row of `table` whose `key` is `id`, with its entry in the same transaction when
 * there was one (two deletions at once: one deletes and writes the entry); whether there was one.
 */
export async function deleteAudited(
  db: PgDb,
  table: PgTable,
  key: PgColumn,
  id: string,
  entry: AuditEntry | undefined,
): Promise<boolean> {
  const deleted = await withAudit(
    db,
    entry,
    (tx) => tx.delete(table).where(eq(key, id)).returning({ id: key }),
    (rows) => rows.length > 0,
  );
  return deleted.length > 0;
}
