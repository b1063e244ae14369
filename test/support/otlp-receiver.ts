/** One span as an OTLP/HTTP JSON export carries it (ids in hex), with its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status: { code?: number };
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, string | number | boolean>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

const flatten = (list: KeyValue[] = []) =>
  Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue!)),
    ]),
  );

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (the collector's /v1/traces, JSON encoding): keeps
 * every span it is sent, with its resource's attributes.
 */
export function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      if (request.method !== "POST" || new URL(request.url).pathname !== "/v1/traces")
        return new Response("not found", { status: 404 });
      contentTypes.push(request.headers.get("content-type") ?? "");
      const body = (await request.json()) as {
        resourceSpans: {
          resource: { attributes: KeyValue[] };
          scopeSpans: {
            spans: (Omit<ReceivedSpan, "attributes" | "resource" | "links" | "parentSpanId"> & {
              parentSpanId?: string;
              attributes?: KeyValue[];
              links?: { traceId: string; spanId: string }[];
            })[];
          }[];
        }[];
      };
      for (const { resource, scopeSpans } of body.resourceSpans) {
        for (const scope of scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              ...span,
              parentSpanId: span.parentSpanId ?? "",
              attributes: flatten(span.attributes),
              links: span.links ?? [],
              resource: flatten(resource.attributes),
            });
          }
        }
      }
      return Response.json({});
    },
  });
  return {
    /** The value of OTEL_EXPORTER_OTLP_ENDPOINT for this receiver. */
    endpoint: `http://127.0.0.1:${server.port}`,
    spans,
    contentTypes,
    stop: () => server.stop(true),
  };
}
