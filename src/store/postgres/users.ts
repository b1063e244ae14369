import { and, asc, eq, ne } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { KeptSessions, SessionStore, UserStore } from "../store.ts";
import { userRow, type NewUser, type Session } from "../types.ts";
import { deleteAudited, recordAudit, withAudit } from "./audit.ts";
import { transaction, type PgDb } from "./connect.ts";
import { sessions, users } from "./schema.ts";

export class PgUsers implements UserStore {
  constructor(private readonly db: PgDb) {}
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
  async create(user: NewUser, audit?: AuditEntry) {
    const [created] = await withAudit(
      this.db,
      audit,
      (tx) => tx.insert(users).values(userRow(user)).onConflictDoNothing().returning(),
      (rows) => rows.length > 0,
    );
    return created ?? null;
  }
  async setPasswordHash(id: string, passwordHash: string, audit?: AuditEntry, keep?: KeptSessions) {
    return transaction(this.db, async ({ orm, raw }) => {
      const changed = await orm.update(users).set({ passwordHash }).where(eq(users.id, id)).returning({ id: users.id });
      const theirs = eq(sessions.userId, id);
      if (keep !== "all")
        await orm.delete(sessions).where(keep === undefined ? theirs : and(theirs, ne(sessions.tokenHash, keep)));
      if (changed.length > 0) await recordAudit(raw, audit);
      return changed.length > 0;
    });
  }
  delete(id: string, audit?: AuditEntry) {
    // Their sessions go with them (foreign key cascade).
    return deleteAudited(this.db, users, users.id, id, audit);
  }
}

export class PgSessions implements SessionStore {
  constructor(private readonly db: PgDb) {}
  async create(session: Session, audit?: AuditEntry) {
    await transaction(this.db, async ({ orm, raw }) => {
      await orm.insert(sessions).values(session);
      await orm.update(users).set({ lastSignInAt: session.createdAt }).where(eq(users.id, session.userId));
      await recordAudit(raw, audit);
    });
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
