import {
  ROOT_CONTEXT,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import packageJson from "../../package.json" with { type: "json" };
import type { SamplerName } from "../config/config.ts";

/**
 * OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: the service's spans go to an
 * OTLP/HTTP collector. Nothing is registered globally (no global tracer provider, context manager
 * or propagator): the code that makes spans gets this object from createApp's deps and passes
 * parents explicitly. Without it (`deps.tracing` undefined) no span is made at all.
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** The caller's W3C trace context (`traceparent`, `tracestate`) as the parent of our span; the root when there is none or it is malformed. */
  callerContext(headers: Headers): Context;
  /** Ends exporting: spans already ended are sent first. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Where spans go (the collector's /v1/traces); ignored when `exporter` is given. */
  url: string;
  serviceName: string;
  /** Which traces are kept (OTEL_TRACES_SAMPLER's names); parentbased_always_on by default. */
  sampler?: SamplerName;
  /** For the ratio samplers. */
  ratio?: number;
  /** Tests may export elsewhere. */
  exporter?: SpanExporter;
}

function sampler(name: SamplerName, ratio: number): Sampler {
  const ratioSampler = new TraceIdRatioBasedSampler(ratio);
  const roots: Record<string, Sampler> = {
    always_on: new AlwaysOnSampler(),
    always_off: new AlwaysOffSampler(),
    traceidratio: ratioSampler,
  };
  const [, parentBased, root] = /^(parentbased_)?(.*)$/.exec(name)!;
  return parentBased ? new ParentBasedSampler({ root: roots[root!]! }) : roots[root!]!;
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => {
    const names: string[] = [];
    headers.forEach((_, name) => names.push(name));
    return names;
  },
};

/**
 * Now, in epoch milliseconds with sub-millisecond digits, for span times. (A performance.now()
 * value given as a span time is shifted by an offset each span computes against Date.now(), which
 * moved the children of one call up to a millisecond against each other.)
 */
export const epochNow = () => performance.timeOrigin + performance.now();

/** A context whose active span is `parent`, for children started later (no context manager is used). */
export const under = (parent: Span | SpanContext): Context =>
  "spanContext" in parent ? trace.setSpan(ROOT_CONTEXT, parent) : trace.setSpanContext(ROOT_CONTEXT, parent);

export function createTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: options.url });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName,
      [ATTR_SERVICE_VERSION]: packageJson.version,
    }),
    sampler: sampler(options.sampler ?? "parentbased_always_on", options.ratio ?? 1),
    // A bigger queue than the default 2,048 spans: a proxied call makes four, and at a few
    // thousand calls a second that dropped spans between exports. Past 16,384 waiting (the
    // collector is slow or gone) spans are dropped rather than held.
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: 16_384,
        maxExportBatchSize: 2_048,
        scheduledDelayMillis: 1_000,
      }),
    ],
  });
  const propagator = new W3CTraceContextPropagator();
  return {
    tracer: provider.getTracer("switchboard", packageJson.version),
    callerContext: (headers) => propagator.extract(ROOT_CONTEXT, headers, headerGetter),
    shutdown: () => provider.shutdown(),
  };
}
