import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import { iso } from "../http/iso-time.ts";
import { timeParam } from "../http/time-param.ts";
import type { Deps } from "../deps.ts";
import { randomId } from "../runtime/random.ts";
import { newRecovery, type Recovery } from "../store/recoveries.ts";
import type { NewDelivery } from "../store/queue.ts";
import { mustEndpoint, type QueueDeps } from "./endpoints.ts";
import { newDeliveryId } from "./ids.ts";

/** Parked deliveries handled per step: one page read, one enqueue of its replays, one progress write. */
export const RECOVER_BATCH = 100;
/** A running recover whose runner has not written for this long is taken over by the next request for it. */
export const RECOVER_STALE_MS = 120_000;

type RecoverDeps = Pick<Deps, "store" | "clock" | "random" | "logger"> & QueueDeps;

/**
 * Bulk recover (issue 19): replays every parked delivery of an endpoint created since `since`
 * (and before the request), in the background, each as a new delivery with `replay_of`
 * (docs/webhooks.md#replay). A payload already gone is skipped and counted; a delivery replayed before is
 * skipped and counted, so asking twice, or from two instances, replays nothing twice. Answers the
 * recover that runs: the new one, or the one already running for the endpoint.
 */
export async function startRecover(
  deps: RecoverDeps,
  accountId: string,
  endpointId: string,
  since: string,
  by: AuditContext,
): Promise<Recovery> {
  await mustEndpoint(deps, accountId, endpointId);
  const from = timeParam("since", since);
  if (from === undefined)
    throw new AppError("invalid_request", "since is required: an ISO 8601 time such as 2026-11-24T10:00:00Z.");
  const now = deps.clock.now();
  const id = randomId(deps.random, "rcv");
  // Recorded when it starts; asking while one runs answers that one and records nothing.
  const entry = auditEntry(deps, by, "endpoint.recover", { kind: "endpoint", id: endpointId }, accountId, {
    recovery_id: [null, id],
    since: [null, iso(from)],
  });
  const { recovery, started } = await deps.store.recoveries.start(
    newRecovery({ id, accountId, endpointId, since: from }, now),
    entry,
  );
  const runnable = started ? recovery : await deps.store.recoveries.takeOver(recovery.id, now - RECOVER_STALE_MS, now);
  if (runnable)
    void runRecover(deps, runnable).catch((error: unknown) =>
      deps.logger.error("bulk recover failed", { recovery_id: runnable.id, error }),
    );
  return runnable ?? recovery;
}

/** Works a recover to its end, a page at a time; stops when another runner has taken it over. */
export async function runRecover(deps: RecoverDeps, start: Recovery): Promise<Recovery> {
  let r = start;
  for (;;) {
    const page = await deps.store.history.parkedSince(r.endpointId, r.since, r.until, r.cursor, RECOVER_BATCH);
    const replays: NewDelivery[] = [];
    const now = deps.clock.now();
    const next = { ...r, found: r.found + page.length, updatedAt: Math.max(now, r.updatedAt + 1) };
    for (const { delivery, replayed } of page) {
      if (!delivery.payloadAvailable) next.skippedExpired++;
      else if (replayed) next.skippedReplayed++;
      else {
        replays.push({
          id: newDeliveryId(deps.random, now),
          accountId: r.accountId,
          endpointId: r.endpointId,
          eventId: delivery.eventId,
          nextAttemptAt: now,
          replayOf: delivery.id,
          // The parked delivery's body has its scheme's shape: its replay keeps both.
          signature: delivery.signature,
          createdAt: now,
        });
        next.replayed++;
      }
    }
    const last = page.at(-1)?.delivery;
    if (last) next.cursor = { createdAt: last.createdAt, id: last.id };
    if (page.length < RECOVER_BATCH) next.status = "done";
    if (replays.length > 0) await deps.queue.enqueue([], replays);
    if (!(await deps.store.recoveries.progress(r.id, r.updatedAt, next))) return next;
    r = next;
    if (r.status === "done") return r;
  }
}

export async function latestRecover(
  deps: Pick<Deps, "store">,
  accountId: string,
  endpointId: string,
): Promise<Recovery | null> {
  await mustEndpoint(deps, accountId, endpointId);
  return (await deps.store.recoveries.latest(endpointId)) ?? null;
}

export const recoveryView = (r: Recovery) => ({
  id: r.id,
  endpoint_id: r.endpointId,
  since: iso(r.since),
  until: iso(r.until),
  status: r.status,
  found: r.found,
  replayed: r.replayed,
  skipped_expired: r.skippedExpired,
  skipped_replayed: r.skippedReplayed,
  started_at: iso(r.startedAt),
  updated_at: iso(r.updatedAt),
});
