import { eq, sql } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { SignInFailures } from "../sign-in-failures.ts";
import type { AuditWriter } from "./audit.ts";
import type { Db } from "./open.ts";
import type { signInFailures } from "./schema.ts";

/** The failure tables of account users and of operators: the same columns. */
type FailureTable = typeof signInFailures;

/** Failed sign-ins per email (lower-cased) in one of the two failure tables. */
export class SqliteSignInFailures implements SignInFailures {
  constructor(
    protected readonly db: Db,
    protected readonly audit: AuditWriter,
    private readonly table: FailureTable,
  ) {}
  async failures(email: string) {
    const row = this.db.select().from(this.table).where(eq(this.table.email, email.toLowerCase())).get();
    return row ? { count: row.count, lastAt: row.lastAt } : undefined;
  }
  async recordFailure(email: string, at: number, audit?: AuditEntry) {
    this.audit.audited(audit, () =>
      this.db
        .insert(this.table)
        .values({ email: email.toLowerCase(), count: 1, lastAt: at })
        .onConflictDoUpdate({ target: this.table.email, set: { count: sql`${this.table.count} + 1`, lastAt: at } })
        .run(),
    );
  }
  async clearFailures(email: string) {
    this.db.delete(this.table).where(eq(this.table.email, email.toLowerCase())).run();
  }
}
