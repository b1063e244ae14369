import { Database } from "bun:sqlite";
import { desc, eq } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { auditConditions } from "../audit-filter.ts";
import {
  ACCOUNT_HOURLY_ENTRIES,
  auditRow,
  capWindow,
  fromAuditRow,
  NOT_RECORDED,
  overflowEntry,
  windowCondition,
  type AuditEntry,
  type AuditFilter,
  type AuditStore,
} from "../audit.ts";
import { statement, type Db } from "./open.ts";
import { auditLog } from "./schema.ts";

const SQLITE_PARAMS = { accountId: "$accountId", since: "$since", failedSignIns: "$failedSignIns" };

/**
 * Writes entries on the connection, with a statement prepared once and shared by every SQLite
 * store that records changes: inside a transaction open on the connection, as part of it.
 */
export class AuditWriter {
  private readonly insert;
  private readonly count;
  private readonly overflow;

  constructor(private readonly sqlite: Database) {
    const insert = `INSERT INTO audit_log (id, at, actor_kind, actor_id, actor_email, action, object_kind, object_id, account_id, ip, changes)
      VALUES ($id, $at, $actorKind, $actorId, $actorEmail, $action, $objectKind, $objectId, $accountId, $ip, $changes)`;
    this.insert = statement(sqlite, insert);
    const count = (accountId: string | null) =>
      statement<{ n: number }, { accountId: string | null; since: number; failedSignIns: number }>(
        sqlite,
        `SELECT count(*) AS n FROM audit_log WHERE ${windowCondition({ accountId }, SQLITE_PARAMS)}`,
      );
    // An account's window and the one of failed sign-ins of no account differ in their SQL.
    this.count = { account: count(""), none: count(null) };
    this.overflow = statement(
      sqlite,
      `${insert} ON CONFLICT (id) DO UPDATE SET changes =
      '{"${NOT_RECORDED}":[null,' || (json_extract(audit_log.changes, '$.${NOT_RECORDED}[1]') + 1) || ']}'`,
    );
  }

  /**
   * Writes `entry` (nothing when none is given) in the transaction the caller has open; past the
   * account's hourly figure, counts it in the hour's overflow entry instead.
   */
  record(entry: AuditEntry | undefined): void {
    if (!entry) return;
    const window = capWindow(entry);
    if (
      window &&
      (this.count[window.accountId === null ? "none" : "account"].get({
        ...window,
        failedSignIns: Number(window.failedSignIns),
      })?.n ?? 0) >= ACCOUNT_HOURLY_ENTRIES
    ) {
      this.overflow.run({ ...auditRow(overflowEntry(entry, window)) });
      return;
    }
    this.insert.run({ ...auditRow(entry) });
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

/**
 * Deletes the row of `table` whose `key` is `id`, with its entry in the same transaction when
 * there was one (two deletions at once: one deletes and writes the entry); whether there was one.
 */
export function deleteAudited(
  db: Db,
  writer: AuditWriter,
  table: SQLiteTable,
  key: SQLiteColumn,
  id: string,
  entry: AuditEntry | undefined,
): boolean {
  return writer.audited(
    entry,
    () => db.delete(table).where(eq(key, id)).returning({ id: key }).all().length > 0,
    (deleted) => deleted,
  );
}

export class SqliteAudit implements AuditStore {
  constructor(
    private readonly db: Db,
    private readonly writer: AuditWriter,
  ) {}

  async record(entry: AuditEntry) {
    this.writer.record(entry);
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
}

/**
 * Writes one entry into the SQLite file at `path` on a connection of its own (`switchboard backup`,
 * which opens no store), waiting for a running server's write in progress. False when the file
 * predates the audit log (no server of this release has migrated it yet): nothing is written.
 */
export function recordInFile(path: string, entry: AuditEntry): boolean {
  const sqlite = new Database(path);
  try {
    sqlite.run("PRAGMA busy_timeout = 5000");
    if (!sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_log'").get()) return false;
    new AuditWriter(sqlite).record(entry);
    return true;
  } finally {
    sqlite.close();
  }
}
