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
  /** The signup popup's last authorization code (sealed at rest), to know the same code sent twice. */
  code: string | null;
  /** The business's token the code was exchanged for (sealed at rest). */
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

export interface OnboardingStore {
  get(id: string): Promise<Onboarding | undefined>;
  byNumber(phoneNumberId: string): Promise<Onboarding | undefined>;
  /** The account's signups that have not finished (failed, or cut off), newest first. */
  unfinished(accountId: string): Promise<Onboarding[]>;
  /** Inserts it unless the number already has one; returns the one stored. */
  create(onboarding: Onboarding): Promise<Onboarding>;
  /** Takes the run lease until `until` unless a run holds it past `now`; returns the onboarding as leased. */
  claim(id: string, now: number, until: number): Promise<Onboarding | undefined>;
  /**
   * Writes a run's progress (code, token, PIN, kind, WABA, steps, finish, lease) if the run still
   * holds the lease `heldUntil`; false when it lost it. Pre-flights and syncs are left as they are.
   */
  saveRun(onboarding: Onboarding, heldUntil: number): Promise<boolean>;
  /** Records the pre-flight of one field beside the others' (a run in progress is left as it is). */
  recordPreflight(id: string, field: string, preflight: Preflight, at: number): Promise<void>;
  /** Records one sync's request beside the other's. */
  recordSync(id: string, syncType: string, sync: SyncRequest, at: number): Promise<void>;
}
