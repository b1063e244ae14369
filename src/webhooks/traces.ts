import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Span, type SpanContext } from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
} from "@opentelemetry/semantic-conventions";
import { epochNow, under, type Tracing } from "../observability/tracing.ts";
import { ATTR_REQUEST_ID } from "../proxy/call-trace.ts";
import type { ClaimedDelivery } from "../store/queue.ts";
import type { AttemptOutcome } from "./outcome.ts";

export interface IngressSpan {
  /** The parent of the event's deliveries' first attempts. */
  context: SpanContext;
  accepted(events: number, deliveries: number): void;
  end(status: number): void;
}

/**
 * The span of one upstream event POSTed to /webhooks/upstream (a server span, child of the
 * caller's `traceparent`), ended with the answer's status. Its context is handed to the deliveries
 * the event makes, so their first attempts appear in the same trace.
 */
export function ingressSpan(tracing: Tracing | undefined, request: Request, requestId: string): IngressSpan | null {
  if (!tracing) return null;
  const span = tracing.tracer.startSpan(
    "POST /webhooks/upstream",
    {
      kind: SpanKind.SERVER,
      startTime: epochNow(),
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: "POST",
        [ATTR_HTTP_ROUTE]: "/webhooks/upstream",
        [ATTR_REQUEST_ID]: requestId,
      },
    },
    tracing.callerContext(request.headers),
  );
  return {
    context: span.spanContext(),
    accepted(events: number, deliveries: number) {
      span.setAttributes({ "switchboard.webhook.events": events, "switchboard.webhook.deliveries": deliveries });
    },
    end(status: number) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(epochNow());
    },
  };
}

/**
 * The span of one delivery attempt (a client span): a child of the event's ingress span when the
 * attempt comes straight from it, a trace of its own for retries and replays. The receiver's URL
 * is left out (its path may hold a token); its host and the delivery's ids are in.
 */
export function attemptSpan(
  tracing: Tracing | undefined,
  claimed: ClaimedDelivery,
  number: number,
  origin: SpanContext | undefined,
): Span | null {
  if (!tracing) return null;
  return tracing.tracer.startSpan(
    "webhook delivery",
    {
      kind: SpanKind.CLIENT,
      startTime: epochNow(),
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: "POST",
        [ATTR_SERVER_ADDRESS]: new URL(claimed.endpoint.url).hostname,
        "switchboard.delivery_id": claimed.delivery.id,
        "switchboard.endpoint_id": claimed.endpoint.id,
        "switchboard.attempt": number,
      },
    },
    origin ? under(origin) : ROOT_CONTEXT,
  );
}

/** Ends an attempt's span with how it went and what comes next (`pending`, `succeeded` or `parked`). */
export function endAttemptSpan(span: Span, outcome: AttemptOutcome, next: string): void {
  span.setAttribute("switchboard.delivery.outcome", outcome.kind);
  span.setAttribute("switchboard.delivery.next", next);
  if ("status" in outcome) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
  else span.setAttribute(ATTR_ERROR_TYPE, outcome.kind);
  if (outcome.kind !== "succeeded")
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: "error" in outcome ? outcome.error : `HTTP ${outcome.status}`,
    });
  span.end(epochNow());
}
