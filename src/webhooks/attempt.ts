import type { SpanContext } from "@opentelemetry/api";
import { safePost, type SafePostOptions } from "../net/safe-post.ts";
import type { Notifier } from "../notify/notifier.ts";
import type { Deps } from "../deps.ts";
import type { DeliveryEndpoint } from "../store/endpoints.ts";
import type { ClaimedDelivery, Completion, DeliveryNext, EndpointChange } from "../store/queue.ts";
import { HISTORY_FIELD } from "./fields.ts";
import { afterAttempt, attemptRecord, classify, FAILURE_RULES } from "./outcome.ts";
import { hubSignature } from "./hub-signature.ts";
import { signatureHeader } from "./signing.ts";
import { attemptSpan, endAttemptSpan } from "./traces.ts";

export type AttemptDeps = Pick<Deps, "store" | "clock" | "config" | "logger" | "metrics" | "tracing"> & {
  notifier: Notifier;
  client: Omit<SafePostOptions, "timeoutMs">;
};

/** The secrets that sign now: the current one, and the previous one during the rotation overlap. */
export function signingSecrets(endpoint: DeliveryEndpoint, now: number): string[] {
  const { previousSecret } = endpoint;
  const overlap = previousSecret !== null && (endpoint.previousSecretExpiresAt ?? 0) > now;
  return overlap ? [endpoint.secret, previousSecret] : [endpoint.secret];
}

/** docs/webhooks.md#the-request-and-its-signature headers, signed afresh for this attempt. */
export function deliveryHeaders(claimed: ClaimedDelivery, body: Uint8Array, now: number): Record<string, string> {
  const id = claimed.delivery.id;
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "proxy-webhooks/1",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(signingSecrets(claimed.endpoint, now), id, timestamp, body),
  };
  if (claimed.upstreamSignature !== null) headers["x-upstream-signature-256"] = claimed.upstreamSignature;
  // docs/webhooks.md#signature-schemes: one signature, by the newest secret's whole text.
  if (claimed.delivery.signature === "platform")
    headers["x-hub-signature-256"] = hubSignature(claimed.endpoint.secret, body);
  return headers;
}

async function tellAccount(deps: AttemptDeps, endpoint: DeliveryEndpoint, change: EndpointChange): Promise<void> {
  if (change.disabled === "gone") {
    await deps.notifier.notify(
      endpoint.accountId,
      "endpoint_disabled",
      `Webhook endpoint disabled: ${endpoint.url}`,
      `The endpoint ${endpoint.url} answered 410 Gone, so it was disabled and receives nothing until you enable it again in the dashboard.`,
    );
  } else if (change.disabled === "consecutive_failures") {
    await deps.notifier.notify(
      endpoint.accountId,
      "endpoint_disabled",
      `Webhook endpoint disabled: ${endpoint.url}`,
      `${change.consecutiveFailures} delivery attempts in a row to ${endpoint.url} failed with no success in 24 hours, so the endpoint was disabled. Fix the receiver, enable the endpoint in the dashboard and replay the parked deliveries.`,
    );
  } else if (change.warned) {
    await deps.notifier.notify(
      endpoint.accountId,
      "endpoint_failing",
      `Webhook endpoint failing: ${endpoint.url}`,
      `${change.consecutiveFailures} delivery attempts in a row to ${endpoint.url} failed. After ${FAILURE_RULES.disableAt} failures with no success in 24 hours the endpoint is disabled.`,
    );
  }
}

async function finish(deps: AttemptDeps, claimed: ClaimedDelivery, next: DeliveryNext, input: Partial<Completion>) {
  return deps.store.queue.completeAttempt({
    deliveryId: claimed.delivery.id,
    leaseId: claimed.leaseId,
    endpointId: claimed.endpoint.id,
    attempt: null,
    effect: "none",
    next,
    // docs/webhooks.md#retention: a history payload goes as soon as its delivery succeeds or parks.
    deletePayload: claimed.delivery.fields.includes(HISTORY_FIELD) && next.status !== "pending",
    now: deps.clock.now(),
    rules: FAILURE_RULES,
    ...input,
  });
}

/**
 * Makes one attempt of a leased delivery and records where it leaves the delivery and endpoint.
 * `origin`: the trace of the event this attempt comes straight from, if any.
 */
export async function runAttempt(deps: AttemptDeps, claimed: ClaimedDelivery, origin?: SpanContext): Promise<void> {
  const { delivery, endpoint, body } = claimed;
  if (!endpoint.enabled) {
    await finish(deps, claimed, { status: "parked", reason: "endpoint_disabled" }, {});
    deps.metrics.deliveryAttempts.inc({ outcome: "parked_disabled" });
    return;
  }
  if (body === null) {
    await finish(deps, claimed, { status: "parked", reason: "payload_missing" }, {});
    return;
  }
  const started = deps.clock.now();
  const number = delivery.attemptCount + 1;
  const span = attemptSpan(deps.tracing, claimed, number, origin);
  const post = await safePost(
    endpoint.url,
    { headers: deliveryHeaders(claimed, body, started), body: body as Uint8Array<ArrayBuffer> },
    {
      ...deps.client,
      timeoutMs: deps.config.webhookTimeoutMs,
    },
  );
  const outcome = classify(post);
  deps.metrics.deliveryAttempts.inc({ outcome: outcome.kind });
  const now = deps.clock.now();
  const { next, effect } = afterAttempt(outcome, number, deps.config.webhookRetrySchedule, now);
  if (span) endAttemptSpan(span, outcome, next.status);
  const change = await finish(deps, claimed, next, { attempt: attemptRecord(outcome, number, started), effect, now });
  if (outcome.kind !== "succeeded") {
    deps.logger.info("delivery attempt failed", {
      delivery_id: delivery.id,
      endpoint_id: endpoint.id,
      attempt: number,
      outcome: outcome.kind,
      error: "error" in outcome ? outcome.error : `HTTP ${outcome.status}`,
      next: next.status,
    });
  }
  await tellAccount(deps, endpoint, change);
}
