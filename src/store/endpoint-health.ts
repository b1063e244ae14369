import { LAST_SUCCESS_RESOLUTION_MS, type EndpointChange, type FailureRules } from "./queue.ts";

/** What an attempt that changed nothing of its endpoint's health (or recorded nothing) reports. */
export function noChange(): EndpointChange {
  return { consecutiveFailures: 0, warned: false, disabled: null };
}

/** The health columns of an endpoint that a failed attempt is judged by. */
export interface FailingHealth {
  /** Counting the failure being judged. */
  consecutiveFailures: number;
  lastSuccessAt: number | null;
  warnedAt: number | null;
  enabled: boolean;
}

/**
 * What a failed attempt (`gone`: its endpoint answered 410) does to its endpoint under `rules`
 * (docs/webhooks.md#endpoint-health-and-disabling): the same judgement on every backend, whether it counts the failure
 * in SQL or in memory.
 */
export function failureChange(
  health: FailingHealth,
  effect: "failure" | "gone",
  now: number,
  rules: FailureRules,
): EndpointChange {
  const change: EndpointChange = { consecutiveFailures: health.consecutiveFailures, warned: false, disabled: null };
  if (!health.enabled) return change;
  if (effect === "gone") {
    change.disabled = "gone";
    return change;
  }
  // last_success_at may lag the real last success by under LAST_SUCCESS_RESOLUTION_MS: the window
  // is widened by as much, so that an endpoint is never disabled early.
  const quietSince = now - rules.quietMs - LAST_SUCCESS_RESOLUTION_MS;
  const count = health.consecutiveFailures;
  if (count >= rules.disableAt && (health.lastSuccessAt === null || health.lastSuccessAt <= quietSince)) {
    change.disabled = "consecutive_failures";
  } else if (count >= rules.warnAt && health.warnedAt === null) {
    change.warned = true;
  }
  return change;
}
