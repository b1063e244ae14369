import type { RECOVERY_STATUSES } from "./vocabulary.ts";
import type { AuditEntry } from "./audit.ts";

/**
 * A bulk recover (issue 19): "replay every parked delivery of this endpoint since <time>", as a
 * job in the store so that every instance sees it: at most one runs per endpoint, its progress is
 * read by whoever asks, and a runner that died is taken over once its heartbeat is stale.
 */
export interface Recovery {
  id: string;
  accountId: string;
  endpointId: string;
  since: number;
  status: (typeof RECOVERY_STATUSES)[number];
  /** Parked deliveries found so far (created since `since`, up to when the job started). */
  found: number;
  replayed: number;
  /** Payloads already gone: nothing to replay. */
  skippedExpired: number;
  /** Replayed before (by an earlier recover or by hand): not replayed twice. */
  skippedReplayed: number;
  /** The last parked delivery handled, in (createdAt, id) order: where a runner resumes. */
  cursor: { createdAt: number; id: string } | null;
  /** Parked deliveries created after this are not the job's (a recover replays what was parked when it was asked). */
  until: number;
  startedAt: number;
  /** The runner's heartbeat. */
  updatedAt: number;
}

/** A recover as it starts at `now`: running, nothing found yet, for what was parked until now. */
export function newRecovery(job: Pick<Recovery, "id" | "accountId" | "endpointId" | "since">, now: number): Recovery {
  return {
    ...job,
    until: now,
    status: "running",
    found: 0,
    replayed: 0,
    skippedExpired: 0,
    skippedReplayed: 0,
    cursor: null,
    startedAt: now,
    updatedAt: now,
  };
}

export interface RecoveryStore {
  /**
   * Starts a recovery unless one is running for the endpoint: returns the one that runs (the new
   * one, or the one already there: asking twice replays nothing twice). The audit entry is written
   * with a recovery that starts, never with one found running.
   */
  start(recovery: Recovery, audit?: AuditEntry): Promise<{ recovery: Recovery; started: boolean }>;
  get(id: string): Promise<Recovery | undefined>;
  /** The endpoint's newest recovery. */
  latest(endpointId: string): Promise<Recovery | undefined>;
  /** Records progress (and the heartbeat); `expectedUpdatedAt` fences a runner that lost the job to another. */
  progress(
    id: string,
    expectedUpdatedAt: number,
    patch: Pick<
      Recovery,
      "found" | "replayed" | "skippedExpired" | "skippedReplayed" | "cursor" | "status" | "updatedAt"
    >,
  ): Promise<boolean>;
  /** Takes over a running job whose heartbeat is older than `staleBefore`; returns it with the new heartbeat. */
  takeOver(id: string, staleBefore: number, now: number): Promise<Recovery | undefined>;
}
