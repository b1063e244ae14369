import { asc, eq } from "drizzle-orm";
import type { Operator, OperatorSession, OperatorStore } from "../operators.ts";
import { transaction, type PgDb } from "./connect.ts";
import { operatorSessions, operatorSignInFailures, operators, type signInFailures } from "./schema.ts";
import { PgSignInFailures } from "./sign-in-failures.ts";

export class PgOperators extends PgSignInFailures implements OperatorStore {
  constructor(db: PgDb) {
    // The same columns as the users' table; only the name differs.
    super(db, operatorSignInFailures as unknown as typeof signInFailures);
  }
  async list() {
    return this.db.select().from(operators).orderBy(asc(operators.createdAt), asc(operators.id));
  }
  async byEmail(email: string) {
    return (await this.db.select().from(operators).where(eq(operators.email, email.toLowerCase())))[0];
  }
  async byId(id: string) {
    return (await this.db.select().from(operators).where(eq(operators.id, id)))[0];
  }
  async create(operator: Operator) {
    const row = { ...operator, email: operator.email.toLowerCase() };
    const [created] = await this.db.insert(operators).values(row).onConflictDoNothing().returning();
    return created ?? null;
  }
  async setPasswordHash(id: string, passwordHash: string) {
    return transaction(this.db, async ({ orm }) => {
      const changed = await orm
        .update(operators)
        .set({ passwordHash })
        .where(eq(operators.id, id))
        .returning({ id: operators.id });
      await orm.delete(operatorSessions).where(eq(operatorSessions.operatorId, id));
      return changed.length > 0;
    });
  }
  async delete(id: string) {
    // Its sessions go with it (foreign key cascade).
    return (await this.db.delete(operators).where(eq(operators.id, id)).returning({ id: operators.id })).length > 0;
  }
  async createSession(session: OperatorSession) {
    await this.db.insert(operatorSessions).values(session);
  }
  async findSession(tokenHash: string) {
    return (await this.db.select().from(operatorSessions).where(eq(operatorSessions.tokenHash, tokenHash)))[0];
  }
  async deleteSession(tokenHash: string) {
    await this.db.delete(operatorSessions).where(eq(operatorSessions.tokenHash, tokenHash));
  }
}
