import { and, asc, eq, ne } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { KeptSessions, SessionStore, UserStore } from "../store.ts";
import { userRow, type NewUser, type Session } from "../types.ts";
import { deleteAudited, type AuditWriter } from "./audit.ts";
import type { Db } from "./open.ts";
import { sessions, users } from "./schema.ts";

export class SqliteUsers implements UserStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
  ) {}
  async byEmail(email: string) {
    return this.db.select().from(users).where(eq(users.email, email.toLowerCase())).get();
  }
  async byId(id: string) {
    return this.db.select().from(users).where(eq(users.id, id)).get();
  }
  async ofAccount(accountId: string) {
    return this.db
      .select()
      .from(users)
      .where(eq(users.accountId, accountId))
      .orderBy(asc(users.createdAt), asc(users.id))
      .all();
  }
  async create(user: NewUser, audit?: AuditEntry) {
    return this.audit.audited(
      audit,
      () => this.db.insert(users).values(userRow(user)).onConflictDoNothing().returning().get() ?? null,
      (created) => created !== null,
    );
  }
  async setPasswordHash(id: string, passwordHash: string, audit?: AuditEntry, keep?: KeptSessions) {
    return this.db.transaction((tx) => {
      const changed =
        tx.update(users).set({ passwordHash }).where(eq(users.id, id)).returning({ id: users.id }).all().length > 0;
      const theirs = eq(sessions.userId, id);
      if (keep !== "all")
        tx.delete(sessions)
          .where(keep === undefined ? theirs : and(theirs, ne(sessions.tokenHash, keep)))
          .run();
      if (changed) this.audit.record(audit);
      return changed;
    });
  }
  async delete(id: string, audit?: AuditEntry) {
    // Their sessions go with them (foreign key cascade).
    return deleteAudited(this.db, this.audit, users, users.id, id, audit);
  }
}

export class SqliteSessions implements SessionStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
  ) {}
  async create(session: Session, audit?: AuditEntry) {
    this.db.transaction((tx) => {
      tx.insert(sessions).values(session).run();
      tx.update(users).set({ lastSignInAt: session.createdAt }).where(eq(users.id, session.userId)).run();
      this.audit.record(audit);
    });
  }
  async find(tokenHash: string) {
    return this.db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash)).get();
  }
  async delete(tokenHash: string, audit?: AuditEntry) {
    this.audit.audited(
      audit,
      () => this.db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).returning().all(),
      (deleted) => deleted.length > 0,
    );
  }
}
