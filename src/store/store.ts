import type {
  Account,
  ApiKey,
  BucketState,
  NewUser,
  Notification,
  PhoneNumber,
  Session,
  StatusCause,
  User,
  Waba,
  WabaStatus,
} from "./types.ts";
import type { AuditEntry, AuditStore } from "./audit.ts";
import type { EndpointStore } from "./endpoints.ts";
import type { OperatorStore } from "./operators.ts";
import type { OverviewStore } from "./overview.ts";
import type { DeliveryHistory } from "./history.ts";
import type { OnboardingStore } from "./onboardings.ts";
import type { InstanceStore } from "./instances.ts";
import type { DeliveryQueue } from "./queue.ts";
import type { Connected } from "./ownership.ts";
import type { RecoveryStore } from "./recoveries.ts";
import type { RequestLogStore } from "./requests.ts";
import type { RetentionStore } from "./retention.ts";
import type { SignInCountStore } from "./sign-in-counts.ts";

/**
 * The storage seam. Each capability sees only its own small interface; a PostgreSQL backend
 * implements the same ones. Writes are async so that a networked backend fits; the directory's
 * reads are synchronous because the proxy's hot path reads them from memory.
 */
export interface Store {
  directory: Directory;
  users: UserStore;
  sessions: SessionStore;
  /** The people who run the service and their sessions (src/store/operators.ts). */
  operators: OperatorStore;
  /** Sign-in attempts, counted before their password is checked (src/store/sign-in-counts.ts). */
  signIns: SignInCountStore;
  /** Counts across every account, for the operator console (src/store/overview.ts). */
  overview: OverviewStore;
  notifications: NotificationStore;
  /** The request log of proxied calls and usage per number (src/store/requests.ts). */
  requests: RequestLogStore;
  /** Bulk recovers of endpoints' parked deliveries (src/store/recoveries.ts). */
  recoveries: RecoveryStore;
  /** Numbers' Embedded Signup onboardings and coexistence syncs (src/store/onboardings.ts). */
  onboardings: OnboardingStore;
  buckets: BucketStore;
  /** Webhook endpoints (src/store/endpoints.ts). */
  endpoints: EndpointStore;
  /** The webhook relay's durable delivery queue (src/store/queue.ts). */
  queue: DeliveryQueue;
  /** The instances working the queue, and this one's beats (src/store/instances.ts). */
  instances: InstanceStore;
  /** What the queue delivered: deliveries, attempts, events, hourly stats (src/store/history.ts). */
  history: DeliveryHistory;
  /** Deletion of what outlived its account's retention (src/store/retention.ts). */
  retention: RetentionStore;
  /** Who changed what (src/store/audit.ts); entries are written by the changes' own methods (their `audit` argument). */
  audit: AuditStore;
  /** True when the database answers a trivial query (promptly: /healthz waits for it). */
  healthy(): Promise<boolean>;
  /** Stops background work and releases the database; nothing is used after. */
  close(): Promise<void>;
}

/**
 * Accounts, API keys, WABAs and numbers: a write-through in-memory view, so that every read on the
 * proxy path is a map look-up and every change is visible to the very next request. Each write
 * takes an optional audit entry, written in its transaction when it changes a row.
 */
export interface Directory {
  /**
   * Picks up changes that another process (the CLI beside a running server, another instance)
   * committed since the last call; returns true when it reloaded. Cheap when nothing changed:
   * called about once a second, as the backstop of a backend that is also told of changes.
   */
  refresh(): Promise<boolean>;

  account(id: string): Account | undefined;
  accounts(): Account[];
  createAccount(account: Account, audit?: AuditEntry): Promise<Account>;
  /**
   * Creates an account and its first dashboard user in one transaction, each with its entry. Null
   * when a user has the email already (two submissions at once: one wins): then nothing is
   * written, neither the account nor an entry.
   */
  createAccountWithUser(
    account: Account,
    user: NewUser,
    audit?: { account: AuditEntry; user: AuditEntry },
  ): Promise<Account | null>;
  updateAccount(
    id: string,
    patch: Partial<Omit<Account, "id" | "createdAt">>,
    audit?: AuditEntry,
  ): Promise<Account | undefined>;

  apiKeyByHash(keyHash: string): ApiKey | undefined;
  apiKey(id: string): ApiKey | undefined;
  apiKeys(accountId: string): ApiKey[];
  createApiKey(key: ApiKey, audit?: AuditEntry): Promise<ApiKey>;
  /** A key revoked already keeps its first time, and gets no entry. */
  revokeApiKey(id: string, at: number, audit?: AuditEntry): Promise<ApiKey | undefined>;

  waba(wabaId: string): Waba | undefined;
  wabas(accountId: string): Waba[];
  /** Null when a WABA has this id already (two creations at once: one wins; the other writes no entry). */
  createWaba(waba: Waba, audit?: AuditEntry): Promise<Waba | null>;
  updateWaba(wabaId: string, patch: WabaPatch, audit?: AuditEntry): Promise<Waba | undefined>;

  number(phoneNumberId: string): PhoneNumber | undefined;
  numbers(accountId: string): PhoneNumber[];
  numbersOfWaba(wabaId: string): PhoneNumber[];
  /** Null when a number has this id already (two creations at once: one wins; the other writes no entry). */
  createNumber(number: PhoneNumber, audit?: AuditEntry): Promise<PhoneNumber | null>;
  updateNumber(phoneNumberId: string, patch: NumberPatch, audit?: AuditEntry): Promise<PhoneNumber | undefined>;

  /**
   * Connects a number and its WABA for an account (a signup's save, a BYO connect) in one
   * transaction that checks ownership again (connectRefusal): each is inserted as given when
   * absent; a stored WABA takes the given token, app secret and state, a stored number stays as it
   * is. When either is not free for the account, nothing is written (nor the entry).
   */
  connect(waba: Waba, number: PhoneNumber, audit?: AuditEntry): Promise<Connected>;
}

/** What a number's update may change. */
export type NumberPatch = Partial<Omit<PhoneNumber, "phoneNumberId" | "accountId" | "wabaId" | "createdAt">> & {
  updatedAt: number;
};

/** What a WABA's update may change; a status change carries its cause (NO_CAUSE when none). */
export type WabaPatch = {
  status?: WabaStatus;
  accessToken?: string;
  appSecret?: string | null;
  updatedAt: number;
} & Partial<StatusCause>;

/** Which sessions a new password leaves: one (by its token's hash), or every one ("all"). */
export type KeptSessions = string | "all";

export interface UserStore {
  byEmail(email: string): Promise<User | undefined>;
  byId(id: string): Promise<User | undefined>;
  /** The account's users, oldest first (the operator console's account page). */
  ofAccount(accountId: string): Promise<User[]>;
  /** Null when a user has this email already (two creations at once: one wins; the other writes no entry). */
  create(user: NewUser, audit?: AuditEntry): Promise<User | null>;
  /**
   * Replaces a user's password hash and ends every session of theirs but `keep` (a token hash: the
   * session that changed its own password; "all": the demo's restarts, which keep them), in one
   * transaction; false when there is no such user.
   */
  setPasswordHash(id: string, passwordHash: string, audit?: AuditEntry, keep?: KeptSessions): Promise<boolean>;
  /** Deletes the user with their sessions; false when there was none (two deletions at once: one writes the entry). */
  delete(id: string, audit?: AuditEntry): Promise<boolean>;
}

export interface SessionStore {
  /** Opens a session; the user's `lastSignInAt` becomes its creation time, in the same transaction. */
  create(session: Session, audit?: AuditEntry): Promise<void>;
  find(tokenHash: string): Promise<Session | undefined>;
  /** The entry is written only when a session was deleted. */
  delete(tokenHash: string, audit?: AuditEntry): Promise<void>;
}

export interface NotificationStore {
  add(notification: Notification): Promise<void>;
  list(accountId: string, limit?: number): Promise<Notification[]>;
  markEmailed(id: string, at: number): Promise<void>;
}

export interface BucketStore {
  loadAll(): Promise<BucketState[]>;
  /** One batched write of many buckets: the limiter coalesces, never a write per request. */
  saveMany(states: BucketState[]): Promise<void>;
}
