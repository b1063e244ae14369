import { asc, eq } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { Operator, OperatorSession, OperatorStore } from "../operators.ts";
import { deleteAudited, type AuditWriter } from "./audit.ts";
import type { Db } from "./open.ts";
import { operatorSessions, operators } from "./schema.ts";

export class SqliteOperators implements OperatorStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
  ) {}
  async list() {
    return this.db.select().from(operators).orderBy(asc(operators.createdAt), asc(operators.id)).all();
  }
  async byEmail(email: string) {
    return this.db.select().from(operators).where(eq(operators.email, email.toLowerCase())).get();
  }
  async byId(id: string) {
    return this.db.select().from(operators).where(eq(operators.id, id)).get();
  }
  async create(operator: Operator, audit?: AuditEntry) {
    const row = { ...operator, email: operator.email.toLowerCase() };
    return this.audit.audited(
      audit,
      () => this.db.insert(operators).values(row).onConflictDoNothing().returning().get() ?? null,
      (created) => created !== null,
    );
  }
  async setPasswordHash(id: string, passwordHash: string, audit?: AuditEntry, keep?: "all") {
    return this.db.transaction((tx) => {
      const changed =
        tx.update(operators).set({ passwordHash }).where(eq(operators.id, id)).returning({ id: operators.id }).all()
          .length > 0;
      if (keep !== "all") tx.delete(operatorSessions).where(eq(operatorSessions.operatorId, id)).run();
      if (changed) this.audit.record(audit);
      return changed;
    });
  }
  async delete(id: string, audit?: AuditEntry) {
    // Its sessions go with it (foreign key cascade).
    return deleteAudited(this.db, this.audit, operators, operators.id, id, audit);
  }
  async createSession(session: OperatorSession, audit?: AuditEntry) {
    this.audit.audited(audit, () => this.db.insert(operatorSessions).values(session).run());
  }
  async findSession(tokenHash: string) {
    return this.db.select().from(operatorSessions).where(eq(operatorSessions.tokenHash, tokenHash)).get();
  }
  async deleteSession(tokenHash: string, audit?: AuditEntry) {
    this.audit.audited(
      audit,
      () => this.db.delete(operatorSessions).where(eq(operatorSessions.tokenHash, tokenHash)).returning().all(),
      (deleted) => deleted.length > 0,
    );
  }
}
