import type { PostOutcome } from "../net/safe-post.ts";
import type { DeliveryNext, EndpointEffect, FailureRules } from "../store/queue.ts";

/** What one delivery attempt came to (docs/webhooks.md#retries). */
export type AttemptOutcome =
  | { kind: "succeeded"; status: number; excerpt: string; durationMs: number }
  /** Any other status, 3xx included: redirects are never followed. */
  | { kind: "rejected"; status: number; excerpt: string; durationMs: number }
  /** 410: never retried; the endpoint is disabled. */
  | { kind: "gone"; status: 410; excerpt: string; durationMs: number }
  /** The URL or a resolved address is not allowed (docs/webhooks.md#url-rules). */
  | { kind: "blocked"; error: string; durationMs: number }
  /** Time-out, DNS, connection or TLS failure. */
  | { kind: "failed"; error: string; durationMs: number };

/**
 * docs/webhooks.md#endpoint-health-and-disabling: warn at 20 consecutive failures; disable at 50 with no success in 24
 * hours.
 */
export const FAILURE_RULES: FailureRules = { warnAt: 20, disableAt: 50, quietMs: 24 * 60 * 60 * 1000 };

export function classify(post: PostOutcome): AttemptOutcome {
  if (post.kind !== "response") return post;
  const { status, excerpt, durationMs } = post;
  if (status >= 200 && status < 300) return { kind: "succeeded", status, excerpt, durationMs };
  if (status === 410) return { kind: "gone", status, excerpt, durationMs };
  return { kind: "rejected", status, excerpt, durationMs };
}

/**
 * The delivery's next state after attempt number `attempt` (1-based). `schedule` holds the waits
 * between attempts, so it allows `schedule.length + 1` attempts in all (docs/webhooks.md#retries).
 */
export function afterAttempt(
  outcome: AttemptOutcome,
  attempt: number,
  schedule: readonly number[],
  now: number,
): { next: DeliveryNext; effect: EndpointEffect } {
  switch (outcome.kind) {
    case "succeeded":
      return { next: { status: "succeeded" }, effect: "success" };
    case "gone":
      return { next: { status: "parked", reason: "gone" }, effect: "gone" };
    case "rejected":
    case "blocked":
    case "failed": {
      const wait = schedule[attempt - 1];
      if (wait === undefined) return { next: { status: "parked", reason: "attempts_exhausted" }, effect: "failure" };
      return { next: { status: "pending", nextAttemptAt: now + wait }, effect: "failure" };
    }
  }
}

/** The attempt as stored and shown: status code, error text, excerpt, duration. */
export function attemptRecord(outcome: AttemptOutcome, number: number, at: number) {
  const response = "status" in outcome;
  return {
    number,
    at,
    statusCode: response ? outcome.status : null,
    error: response ? (outcome.kind === "succeeded" ? null : `HTTP ${outcome.status}`) : outcome.error,
    responseExcerpt: response ? outcome.excerpt : null,
    durationMs: outcome.durationMs,
  };
}
