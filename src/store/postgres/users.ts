import { asc, eq } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { SessionStore, UserStore } from "../store.ts";
import type { Session, User } from "../types.ts";
import { withAudit, withAuditStatement } from "./audit.ts";
import type { PgDb } from "./connect.ts";
import { sessions, signInFailures, users } from "./schema.ts";
import { PgSignInFailures } from "./sign-in-failures.ts";

export class PgUsers extends PgSignInFailures implements UserStore {
  constructor(db: PgDb) {
    super(db, signInFailures);
  }
  async byEmail(email: string) {
    return (await this.db.select().from(users).where(eq(users.email, email.toLowerCase())))[0];
  }
  async byId(id: string) {
    return (await this.db.select().from(users).where(eq(users.id, id)))[0];
  }
  async ofAccount(accountId: string) {
    return this.db
      .select()
      .from(users)
      .where(eq(users.accountId, accountId))
      .orderBy(asc(users.createdAt), asc(users.id));
  }
  async create(user: User, audit?: AuditEntry) {
    const row = { ...user, email: user.email.toLowerCase() };
    const [created] = await withAudit(
      this.db,
      audit,
      (tx) => tx.insert(users).values(row).onConflictDoNothing().returning(),
      (rows) => rows.length > 0,
    );
    return created ?? null;
  }
  async setPasswordHash(id: string, passwordHash: string) {
    await this.db.update(users).set({ passwordHash }).where(eq(users.id, id));
  }
}

export class PgSessions implements SessionStore {
  constructor(private readonly db: PgDb) {}
  async create(session: Session, audit?: AuditEntry) {
    const change = this.db.insert(sessions).values(session).returning({ tokenHash: sessions.tokenHash });
    await withAuditStatement(this.db, change, audit);
  }
  async find(tokenHash: string) {
    return (await this.db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash)))[0];
  }
  async delete(tokenHash: string, audit?: AuditEntry) {
    await withAudit(
      this.db,
      audit,
      (tx) => tx.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).returning({ tokenHash: sessions.tokenHash }),
      (rows) => rows.length > 0,
    );
  }
}
