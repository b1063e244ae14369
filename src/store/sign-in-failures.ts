import type { AuditEntry } from "./audit.ts";

/** Failed sign-ins per email, to slow down guessing (src/auth/sign-in.ts). */
export interface SignInFailures {
  failures(email: string): Promise<{ count: number; lastAt: number } | undefined>;
  /** Counts one more failure, with its `session.failed` entry (src/store/audit.ts) in the same transaction. */
  recordFailure(email: string, at: number, audit?: AuditEntry): Promise<void>;
  clearFailures(email: string): Promise<void>;
}
