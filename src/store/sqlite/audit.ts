import type { Database } from "bun:sqlite";
import { desc } from "drizzle-orm";
import { auditConditions } from "../audit-filter.ts";
import { auditRow, fromAuditRow, type AuditEntry, type AuditFilter, type AuditStore } from "../audit.ts";
import { statement, type Db } from "./open.ts";
import { auditLog } from "./schema.ts";

/** Rows deleted per statement by the purge, so that no write holds the database long. */
const PURGE_BATCH = 5_000;

/**
 * Writes entries on the connection, with a statement prepared once and shared by every SQLite
 * store that records changes: inside a transaction open on the connection, as part of it.
 */
export class AuditWriter {
  private readonly insert;

  constructor(private readonly sqlite: Database) {
    this.insert = statement(
      sqlite,
      `INSERT INTO audit_log (id, at, actor_kind, actor_id, actor_email, action, object_kind, object_id, account_id, ip, changes)
      VALUES ($id, $at, $actorKind, $actorId, $actorEmail, $action, $objectKind, $objectId, $accountId, $ip, $changes)`,
    );
  }

  /** Writes `entry` (nothing when none is given) in the transaction the caller has open. */
  record(entry: AuditEntry | undefined): void {
    if (entry) this.insert.run({ ...auditRow(entry) });
  }

  /**
   * Runs `write` with its entry in one transaction, the entry written only when `wrote` says the
   * write changed something; with no entry, `write` runs as it would alone.
   */
  audited<T>(entry: AuditEntry | undefined, write: () => T, wrote: (result: T) => boolean = () => true): T {
    if (!entry) return write();
    return this.sqlite.transaction(() => {
      const result = write();
      if (wrote(result)) this.record(entry);
      return result;
    })();
  }
}

export class SqliteAudit implements AuditStore {
  private readonly purgeBatch;

  constructor(private readonly db: Db) {
    this.purgeBatch = statement<unknown, { before: number }>(
      db.$client,
      `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $before LIMIT ${PURGE_BATCH})`,
    );
  }

  async list(filter: AuditFilter, limit: number) {
    return this.db
      .select()
      .from(auditLog)
      .where(auditConditions(auditLog, filter))
      .orderBy(desc(auditLog.at), desc(auditLog.id))
      .limit(limit)
      .all()
      .map(fromAuditRow);
  }

  async purgeAudit(now: number, windowMs: number) {
    let removed = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH; removed += n)
      n = this.purgeBatch.run({ before: now - windowMs }).changes;
    return removed;
  }
}
