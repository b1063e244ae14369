import { eq, sql } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { SessionStore, UserStore } from "../store.ts";
import type { Session, User } from "../types.ts";
import { withAudit, withAuditStatement } from "./audit.ts";
import type { PgDb } from "./connect.ts";
import { sessions, signInFailures, users } from "./schema.ts";

export class PgUsers implements UserStore {
  constructor(private readonly db: PgDb) {}
  async byEmail(email: string) {
    return (await this.db.select().from(users).where(eq(users.email, email.toLowerCase())))[0];
  }
  async byId(id: string) {
    return (await this.db.select().from(users).where(eq(users.id, id)))[0];
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
  async failures(email: string) {
    const [row] = await this.db.select().from(signInFailures).where(eq(signInFailures.email, email.toLowerCase()));
    return row ? { count: row.count, lastAt: row.lastAt } : undefined;
  }
  async recordFailure(email: string, at: number, audit?: AuditEntry) {
    const change = this.db
      .insert(signInFailures)
      .values({ email: email.toLowerCase(), count: 1, lastAt: at })
      .onConflictDoUpdate({
        target: signInFailures.email,
        set: { count: sql`${signInFailures.count} + 1`, lastAt: at },
      })
      .returning({ email: signInFailures.email });
    await withAuditStatement(this.db, change, audit);
  }
  async clearFailures(email: string) {
    await this.db.delete(signInFailures).where(eq(signInFailures.email, email.toLowerCase()));
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
