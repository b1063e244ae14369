import type { AuditEntry } from "./audit.ts";
import type { NumberKind } from "./types.ts";

/**
 * A number's onboarding through Embedded Signup (issue 20): each server step and its outcome, so
 * that a retry resumes where it failed, and for a coexistence number the two one-time syncs and the
 * pre-flight checks that guard them. One per number.
 */
export interface Onboarding {
  id: string;
  accountId: string;
  phoneNumberId: string;
  wabaId: string;
  kind: Extract<NumberKind, "embedded" | "coexistence">;
  /** The signup popup's authorization code (sealed at rest) until it is exchanged. */
  code: string | null;
  /** SHA-256 of the last code, to know the same code sent twice (a double submit) once the code is gone. */
  codeHash: string | null;
  /** The business's token the code was exchanged for (sealed at rest), until the number is saved. */
  accessToken: string | null;
  /** The registration PIN the user chose (sealed at rest), kept so that a retry can register again. */
  pin: string | null;
  steps: Partial<Record<StepName, StepOutcome>>;
  /** Coexistence: the pre-flight check last run for each sync's field. */
  preflights: Partial<Record<string, Preflight>>;
  /** Coexistence: each sync the platform was asked for (it allows each once). */
  syncs: Partial<Record<string, SyncRequest>>;
  /** When the number was stored: the platform's 24 hours for the coexistence syncs count from here. */
  finishedAt: number | null;
  /** Until when a run of the steps holds it (null: none does), so two runs never interleave. */
  leaseUntil: number | null;
  /**
   * When a run that has not finished expires (EMBEDDED_SIGNUP_EXPIRY after its code came): from
   * then it holds no number, its code, token and PIN are dropped, and one never finished is gone.
   * Null once a run finished.
   */
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type StepName = "exchange" | "subscribe" | "register" | "sync" | "save";

export type StepOutcome =
  | { status: "done"; at: number; detail?: string }
  | { status: "failed"; at: number; reason: string; code?: number }
  | { status: "skipped"; at: number; detail: string };

export interface Preflight {
  at: number;
  /** The test event's delivery to each endpoint subscribed to the field. */
  deliveries: { endpointId: string; deliveryId: string }[];
}

export interface SyncRequest {
  at: number;
  /** The platform's id of the sync request. */
  requestId: string | null;
  /** Started although no endpoint had passed the pre-flight. */
  overridden: boolean;
}

/** An onboarding's secrets, dropped when its run finishes or expires. */
export const NO_SECRETS = { code: null, accessToken: null, pin: null } as const;

/** True once a run's time ran out (see `expiresAt`). */
export const expired = (o: Pick<Onboarding, "expiresAt">, now: number) => o.expiresAt !== null && o.expiresAt <= now;

/**
 * A stored onboarding as every look-up gives it at `now`: one never finished is gone once expired
 * (whether or not the sweep has deleted it yet); a finished one whose later run expired keeps its
 * record, without the secrets.
 */
export function live(o: Onboarding, now: number): Onboarding | undefined {
  if (!expired(o, now)) return o;
  return o.finishedAt === null ? undefined : { ...o, ...NO_SECRETS };
}

/**
 * Whether another account's onboarding of a number gives way to a new one (issues 26, 34). A
 * number is held against other accounts only by a signup past the code exchange, whose token has
 * read the number from the platform (a made-up code, or a real one for another business, holds
 * nothing), that has not expired, or one whose run is under way; never by one when the number is
 * already the new account's (the operator connected it there). A finished one is its account's
 * number and stays.
 */
export function yieldsTo(existing: Onboarding, now: number, numberIsTheirs: boolean): boolean {
  if (existing.finishedAt !== null) return false;
  if (numberIsTheirs || expired(existing, now)) return true;
  const running = existing.leaseUntil !== null && existing.leaseUntil > now;
  return !running && existing.steps.exchange?.status !== "done";
}

/** How a new onboarding is stored: the one given, the account's own one for the number, or why neither. */
export type Created = { onboarding: Onboarding } | { refused: "held" | "too_many" };

/**
 * What `create` does given the number's stored onboarding (each backend runs it in its
 * transaction, the row locked): insert the new one, replace the stored one with it, hand back the
 * account's own, or refuse. Accounts are compared here, never after.
 */
export function createPlan(
  stored: Onboarding | undefined,
  onboarding: Onboarding,
  options: CreateOptions,
): "insert" | "replace" | Created {
  if (!stored) return "insert";
  if (stored.accountId === onboarding.accountId) {
    const own = live(stored, options.now);
    return own ? { onboarding: own } : "replace";
  }
  return yieldsTo(stored, options.now, options.numberIsTheirs) ? "replace" : { refused: "held" };
}

/** Whether the cap refuses a new onboarding, given how many live unfinished ones its account has. */
export const overCap = (onboarding: Onboarding, options: CreateOptions, unfinished: number) =>
  onboarding.finishedAt === null && options.maxUnfinished !== undefined && unfinished >= options.maxUnfinished;

export interface CreateOptions {
  now: number;
  /** The number is already the new onboarding's account's: any other account's unfinished one gives way. */
  numberIsTheirs: boolean;
  /** Refused (too_many) when the account already has this many live unfinished ones; absent: no cap. */
  maxUnfinished?: number;
}

/** The operator's filters; every look-up leaves out what has expired. */
export interface OnboardingFilter {
  accountId?: string;
  phoneNumberId?: string;
}

export interface OnboardingStore {
  get(id: string, now: number): Promise<Onboarding | undefined>;
  /** The account's onboarding of the number; another account's is not found. */
  byNumber(accountId: string, phoneNumberId: string, now: number): Promise<Onboarding | undefined>;
  /** The account's signups that have not finished (failed, or cut off) and not expired, newest first. */
  unfinished(accountId: string, now: number): Promise<Onboarding[]>;
  /** Onboardings by account and number, newest first (the operator's list). */
  list(filter: OnboardingFilter, now: number): Promise<Onboarding[]>;
  /**
   * In one transaction: when the number has no live onboarding, inserts `onboarding` (counting the
   * account's unfinished ones first against the cap); when it has the account's own, returns that
   * one; when another account's, replaces it with `onboarding` if it gives way (yieldsTo), else
   * refuses. Never hands one account another's. The audit entry is written with `onboarding`
   * stored, never when the account's own is returned or nothing is stored.
   */
  create(onboarding: Onboarding, options: CreateOptions, audit?: AuditEntry): Promise<Created>;
  /**
   * Takes the run lease until `until` unless a run holds it past `now`; returns the onboarding as
   * leased (the entry written with the lease taken).
   */
  claim(id: string, accountId: string, now: number, until: number, audit?: AuditEntry): Promise<Onboarding | undefined>;
  /**
   * Writes a run's progress (code, token, PIN, kind, WABA, steps, finish, lease, expiry) if the run
   * still holds the lease `heldUntil`; false when it lost it. Pre-flights and syncs are left as they are.
   */
  saveRun(onboarding: Onboarding, heldUntil: number): Promise<boolean>;
  /** Records the pre-flight of one field beside the others' (a run in progress is left as it is). */
  recordPreflight(id: string, field: string, preflight: Preflight, at: number, audit?: AuditEntry): Promise<void>;
  /** Records one sync's request beside the other's. */
  recordSync(id: string, syncType: string, sync: SyncRequest, at: number, audit?: AuditEntry): Promise<void>;
  /** Deletes one (the operator's call); returns it as it was, or undefined when there is none (and no entry). */
  delete(id: string, audit?: AuditEntry): Promise<Onboarding | undefined>;
}
