import { eq, sql } from "drizzle-orm";
import type { AuditEntry } from "../audit.ts";
import type { SignInFailures } from "../sign-in-failures.ts";
import { withAuditStatement } from "./audit.ts";
import type { PgDb } from "./connect.ts";
import type { signInFailures } from "./schema.ts";

/** The failure tables of account users and of operators: the same columns. */
type FailureTable = typeof signInFailures;

/** Failed sign-ins per email (lower-cased) in one of the two failure tables. */
export class PgSignInFailures implements SignInFailures {
  constructor(
    protected readonly db: PgDb,
    private readonly table: FailureTable,
  ) {}
  async failures(email: string) {
    const [row] = await this.db.select().from(this.table).where(eq(this.table.email, email.toLowerCase()));
    return row ? { count: row.count, lastAt: row.lastAt } : undefined;
  }
  async recordFailure(email: string, at: number, audit?: AuditEntry) {
    const change = this.db
      .insert(this.table)
      .values({ email: email.toLowerCase(), count: 1, lastAt: at })
      .onConflictDoUpdate({ target: this.table.email, set: { count: sql`${this.table.count} + 1`, lastAt: at } })
      .returning({ email: this.table.email });
    await withAuditStatement(this.db, change, audit);
  }
  async clearFailures(email: string) {
    await this.db.delete(this.table).where(eq(this.table.email, email.toLowerCase()));
  }
}
