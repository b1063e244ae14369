import { eq, sql } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { SessionStore, UserStore } from "../store.ts";
import type { Session, User } from "../types.ts";
import type { AuditWriter } from "./audit.ts";
import type { Db } from "./open.ts";
import { sessions, signInFailures, users } from "./schema.ts";

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
  async create(user: User, audit?: AuditEntry) {
    const row = { ...user, email: user.email.toLowerCase() };
    return this.audit.audited(
      audit,
      () => this.db.insert(users).values(row).onConflictDoNothing().returning().get() ?? null,
      (created) => created !== null,
    );
  }
  async failures(email: string) {
    const row = this.db.select().from(signInFailures).where(eq(signInFailures.email, email.toLowerCase())).get();
    return row ? { count: row.count, lastAt: row.lastAt } : undefined;
  }
  async recordFailure(email: string, at: number, audit?: AuditEntry) {
    const key = email.toLowerCase();
    this.audit.audited(audit, () =>
      this.db
        .insert(signInFailures)
        .values({ email: key, count: 1, lastAt: at })
        .onConflictDoUpdate({
          target: signInFailures.email,
          set: { count: sql`${signInFailures.count} + 1`, lastAt: at },
        })
        .run(),
    );
  }
  async clearFailures(email: string) {
    this.db.delete(signInFailures).where(eq(signInFailures.email, email.toLowerCase())).run();
  }
  async setPasswordHash(id: string, passwordHash: string) {
    this.db.update(users).set({ passwordHash }).where(eq(users.id, id)).run();
  }
}

export class SqliteSessions implements SessionStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
  ) {}
  async create(session: Session, audit?: AuditEntry) {
    this.audit.audited(audit, () => this.db.insert(sessions).values(session).run());
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
