import { ROOT_CONTEXT, trace, type Context, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import type { SpanDetail } from "../config/config.ts";

/**
 * OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: the service's spans go to an
 * OTLP/HTTP collector. Nothing is registered globally (no global tracer provider, context manager
 * or propagator): the code that makes spans gets this object from createApp's deps and passes
 * parents explicitly. Without it (`deps.tracing` undefined) no span is made at all, and the SDK
 * (tracing-sdk.ts, which makes it) is never loaded.
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** `call`: one span per proxied call, its steps as attributes; `full`: the steps as its children too. */
  readonly detail: SpanDetail;
  /** The caller's W3C trace context (`traceparent`, `tracestate`) as the parent of our span; the root when there is none or it is malformed. */
  callerContext(headers: Headers): Context;
  /** Ends exporting: spans already ended are sent first. */
  shutdown(): Promise<void>;
}

/** Read once: the getter costs about as much as performance.now() itself (bench/proxy/tracing-cost.ts's profile). */
const TIME_ORIGIN = performance.timeOrigin;

/**
 * Now, in epoch milliseconds with sub-millisecond digits, for span times. (A performance.now()
 * value given as a span time is shifted by an offset each span computes against Date.now(), which
 * moved the children of one call up to a millisecond against each other.)
 */
export const epochNow = () => TIME_ORIGIN + performance.now();

/** A context whose active span is `parent`, for children started later (no context manager is used). */
export const under = (parent: Span | SpanContext): Context =>
  "spanContext" in parent ? trace.setSpan(ROOT_CONTEXT, parent) : trace.setSpanContext(ROOT_CONTEXT, parent);
