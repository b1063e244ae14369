import { asc, eq } from "drizzle-orm";
import type { SessionStore, UserStore } from "../store.ts";
import type { Session, User } from "../types.ts";
import type { Db } from "./open.ts";
import { sessions, signInFailures, users } from "./schema.ts";
import { SqliteSignInFailures } from "./sign-in-failures.ts";

export class SqliteUsers extends SqliteSignInFailures implements UserStore {
  constructor(db: Db) {
    super(db, signInFailures);
  }
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
  async create(user: User) {
    const row = { ...user, email: user.email.toLowerCase() };
    return this.db.insert(users).values(row).onConflictDoNothing().returning().get() ?? null;
  }
  async setPasswordHash(id: string, passwordHash: string) {
    this.db.update(users).set({ passwordHash }).where(eq(users.id, id)).run();
  }
}

export class SqliteSessions implements SessionStore {
  constructor(private readonly db: Db) {}
  async create(session: Session) {
    this.db.insert(sessions).values(session).run();
  }
  async find(tokenHash: string) {
    return this.db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash)).get();
  }
  async delete(tokenHash: string) {
    this.db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).run();
  }
}
