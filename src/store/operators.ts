import type { AuditEntry } from "./audit.ts";

/** A person who runs the service (issue 29): signs in to the operator console; no account is theirs. */
export interface Operator {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}

/** An operator's signed-in browser; kept apart from account users' sessions, so neither opens the other's pages. */
export interface OperatorSession {
  /** sha256 of the cookie value: a stolen database does not yield live sessions. */
  tokenHash: string;
  operatorId: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * Operators, their sessions and their failed sign-ins (a table of their own: an email may also be a
 * user's). Each change takes an optional audit entry (src/store/audit.ts), written in its
 * transaction when it changes a row.
 */
export interface OperatorStore {
  /** Oldest first. */
  list(): Promise<Operator[]>;
  byEmail(email: string): Promise<Operator | undefined>;
  byId(id: string): Promise<Operator | undefined>;
  /** Null when an operator has this email already (two creations at once: one wins; the other writes no entry). */
  create(operator: Operator, audit?: AuditEntry): Promise<Operator | null>;
  /**
   * Replaces the password hash and ends the operator's sessions ("all" keeps them: the demo's
   * restarts), in one transaction; false when there is no such operator.
   */
  setPasswordHash(id: string, passwordHash: string, audit?: AuditEntry, keep?: "all"): Promise<boolean>;
  /** Deletes the operator with its sessions; false when there was none. */
  delete(id: string, audit?: AuditEntry): Promise<boolean>;

  createSession(session: OperatorSession, audit?: AuditEntry): Promise<void>;
  findSession(tokenHash: string): Promise<OperatorSession | undefined>;
  /** The entry is written only when a session was deleted. */
  deleteSession(tokenHash: string, audit?: AuditEntry): Promise<void>;
}
