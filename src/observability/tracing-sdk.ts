import { ROOT_CONTEXT, type TextMapGetter } from "@opentelemetry/api";
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
import type { SamplerName, SpanDetail } from "../config/config.ts";
import type { Tracing } from "./tracing.ts";

// The official SDK behind Tracing: imported only when traces are on (src/system-deps.ts).

export interface TracingOptions {
  /** Where spans go (the collector's /v1/traces); ignored when `exporter` is given. */
  url: string;
  serviceName: string;
  /** Which traces are kept (OTEL_TRACES_SAMPLER's names); parentbased_always_on by default. */
  sampler?: SamplerName;
  /** For the ratio samplers. */
  ratio?: number;
  /** `call` by default (OTEL_SPAN_DETAIL). */
  detail?: SpanDetail;
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
  const parentBased = name.startsWith("parentbased_");
  const root = roots[parentBased ? name.slice("parentbased_".length) : name];
  if (!root) throw new Error(`no sampler ${name}`);
  return parentBased ? new ParentBasedSampler({ root }) : root;
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => {
    const names: string[] = [];
    headers.forEach((_, name) => {
      names.push(name);
    });
    return names;
  },
};

export function createTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: options.url });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName,
      [ATTR_SERVICE_VERSION]: packageJson.version,
    }),
    sampler: sampler(options.sampler ?? "parentbased_always_on", options.ratio ?? 1),
    // A bigger queue than the default 2,048 spans: a proxied call makes up to four, and at a few
    // thousand calls a second that dropped spans between exports. Past 16,384 waiting (the
    // collector is slow or gone) spans are dropped rather than held. Exports of 256 spans, not
    // 2,048: the serving thread turns a batch into JSON in one go (~5 µs a span), and 2,048 at once
    // held every call for ~10 ms; p99 of every call traced went 42 → 23 ms (bench/RESULTS.md).
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: 16_384,
        maxExportBatchSize: 256,
        scheduledDelayMillis: 1_000,
      }),
    ],
  });
  const propagator = new W3CTraceContextPropagator();
  return {
    tracer: provider.getTracer("switchboard", packageJson.version),
    detail: options.detail ?? "call",
    callerContext: (headers) => propagator.extract(ROOT_CONTEXT, headers, headerGetter),
    shutdown: () => provider.shutdown(),
  };
}
