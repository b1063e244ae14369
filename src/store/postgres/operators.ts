import { asc, eq } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { Operator, OperatorSession, OperatorStore } from "../operators.ts";
import { deleteAudited, recordAudit, withAudit, withAuditStatement } from "./audit.ts";
import { transaction, type PgDb } from "./connect.ts";
import { operatorSessions, operators } from "./schema.ts";

export class PgOperators implements OperatorStore {
  constructor(private readonly db: PgDb) {}
  async list() {
    return this.db.select().from(operators).orderBy(asc(operators.createdAt), asc(operators.id));
  }
  async byEmail(email: string) {
    return (await this.db.select().from(operators).where(eq(operators.email, email.toLowerCase())))[0];
  }
  async byId(id: string) {
    return (await this.db.select().from(operators).where(eq(operators.id, id)))[0];
  }
  async create(operator: Operator, audit?: AuditEntry) {
    const row = { ...operator, email: operator.email.toLowerCase() };
    const [created] = await withAudit(
      this.db,
      audit,
      (tx) => tx.insert(operators).values(row).onConflictDoNothing().returning(),
      (rows) => rows.length > 0,
    );
    return created ?? null;
  }
  async setPasswordHash(id: string, passwordHash: string, audit?: AuditEntry, keep?: "all") {
    return transaction(this.db, async ({ orm, raw }) => {
      const changed = await orm
        .update(operators)
        .set({ passwordHash })
        .where(eq(operators.id, id))
        .returning({ id: operators.id });
      if (keep !== "all") await orm.delete(operatorSessions).where(eq(operatorSessions.operatorId, id));
      if (changed.length > 0) await recordAudit(raw, audit);
      return changed.length > 0;
    });
  }
  delete(id: string, audit?: AuditEntry) {
    // Its sessions go with it (foreign key cascade).
    return deleteAudited(this.db, operators, operators.id, id, audit);
  }
  async createSession(session: OperatorSession, audit?: AuditEntry) {
    const change = this.db
      .insert(operatorSessions)
      .values(session)
      .returning({ tokenHash: operatorSessions.tokenHash });
    await withAuditStatement(this.db, change, audit);
  }
  async findSession(tokenHash: string) {
    return (await this.db.select().from(operatorSessions).where(eq(operatorSessions.tokenHash, tokenHash)))[0];
  }
  async deleteSession(tokenHash: string, audit?: AuditEntry) {
    const change = this.db
      .delete(operatorSessions)
      .where(eq(operatorSessions.tokenHash, tokenHash))
      .returning({ tokenHash: operatorSessions.tokenHash });
    await withAuditStatement(this.db, change, audit);
  }
}
