import type { Logger } from "../observability/logger.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Directory } from "../store/store.ts";
import type { NumberStatus, StatusCause } from "../store/types.ts";

/*
 * docs/proxy.md#upstream-errors-that-change-a-state: the upstream errors that change a WABA's or number's stored
 * condition, whether a proxied call or a sync of the number got them, and the record of each change with its cause.
 */

/**
 * docs/proxy.md#upstream-errors-that-change-a-state: upstream codes that change a number's state when the call was made
 * at a number id.
 */
const NUMBER_CODES: Record<number, NumberStatus> = { 131031: "restricted", 133010: "not_registered", 368: "flagged" };

/** The upstream error that changes a state, as its answer gave it. */
export interface UpstreamFault {
  code: number;
  message: string;
}

export type Effect = ({ waba: string } | { number: string; status: NumberStatus }) & { fault: UpstreamFault };

/** The upstream error of a JSON error body: its `error.code` and `error.message`, or null. */
export function upstreamFault(body: unknown): UpstreamFault | null {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== "number") return null;
  return { code: error.code, message: typeof error.message === "string" ? error.message : "" };
}

/**
 * The state change an upstream error calls for when it answered a call at `at`
 * (docs/proxy.md#upstream-errors-that-change-a-state), or null.
 */
export function effectOfFault(
  fault: UpstreamFault,
  at: { idKind: "number" | "waba" | "media"; wabaId: string; phoneNumberId: string | null },
): Effect | null {
  // 190 counts for calls made at a number or WABA id (not at a media id); the other codes only
  // for calls at a number id.
  if (fault.code === 190) return at.idKind === "media" ? null : { waba: at.wabaId, fault };
  const status = NUMBER_CODES[fault.code];
  if (status && at.idKind === "number" && at.phoneNumberId) return { number: at.phoneNumberId, status, fault };
  return null;
}

/** A state change's cause: the upstream error, when, and the proxied call that got it (null: a sync). */
export function causeOf(fault: UpstreamFault, at: number, requestId: string | null): StatusCause {
  return { causeCode: fault.code, causeMessage: fault.message, causeAt: at, causeRequestId: requestId };
}

export function logEffect(logger: Logger, effect: Effect, requestId: string | null): void {
  if ("waba" in effect) logger.warn("upstream revoked a WABA token", { waba_id: effect.waba, request_id: requestId });
  else
    logger.warn("upstream changed a number's state", {
      phone_number_id: effect.number,
      status: effect.status,
      code: effect.fault.code,
      request_id: requestId,
    });
}

/**
 * Records a state change with its cause: the upstream error, when, and the request id of the
 * proxied call that got it (null when no proxied call did: a sync).
 */
export async function applyEffect(
  deps: { directory: Directory; clock: Clock; logger: Logger },
  effect: Effect,
  requestId: string | null,
): Promise<void> {
  const at = deps.clock.now();
  const cause = causeOf(effect.fault, at, requestId);
  if ("waba" in effect)
    await deps.directory.updateWaba(effect.waba, { status: "token_revoked", ...cause, updatedAt: at });
  else await deps.directory.updateNumber(effect.number, { status: effect.status, ...cause, updatedAt: at });
  logEffect(deps.logger, effect, requestId);
}
