import { SpanKind, SpanStatusCode, type Attributes, type Context, type Span } from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
} from "@opentelemetry/semantic-conventions";
import type { ErrorName } from "../errors/catalog.ts";
import type { Decision } from "../limits/token-bucket.ts";
import { epochNow, under, type Tracing } from "../observability/tracing.ts";
import type { Route } from "./allow-list.ts";

/** The attribute naming the request id (`trace_id` of docs/errors.md#the-envelope, sent back as X-Proxy-Request-Id). */
export const ATTR_REQUEST_ID = "switchboard.request_id";

interface Upstream {
  url: string;
  host: string;
  port: number;
}

/** Starts the trace of each proxied call; null when tracing is off (then the proxy makes none). */
export function proxyCallTracer(tracing: Tracing | undefined, upstreamUrl: string) {
  if (!tracing) return null;
  const url = new URL(upstreamUrl);
  const upstream = {
    url: upstreamUrl,
    host: url.hostname,
    port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
  };
  return (request: Request, path: string, requestId: string) =>
    new ProxyCallTrace(
      tracing,
      upstream,
      tracing.callerContext(request.headers),
      epochNow(),
      request.method,
      path,
      requestId,
    );
}

/** How a proxied call ended, as the pipeline saw it: our error, if any (null: upstream answered). */
export interface CallOutcome {
  code: number | string | null;
  error: ErrorName | null;
}

/**
 * The spans of one proxied call: the call itself (a server span, child of the caller's
 * `traceparent`) with what its checks (docs/proxy.md#order-of-checks steps 1-7), the rate-limit decision and the
 * upstream request found; with span detail `full`, those three as its children instead. The
 * pipeline only notes the moments its steps end (two calls); the
 * spans are made when the answer is ready, with those times, so a call costs no span objects until
 * then. Each span ends when the caller's answer, or upstream's, has its headers: bodies stream on.
 */
export class ProxyCallTrace {
  private checksEnd = 0;
  private limitEnd = 0;
  private route: Route | null = null;
  private rateLimit: { bucket: string; decision: Decision } | null = null;

  constructor(
    private readonly tracing: Tracing,
    private readonly upstream: Upstream,
    private readonly parent: Context,
    private readonly started: number,
    private readonly method: string,
    private readonly path: string,
    private readonly requestId: string,
  ) {}

  /** Steps 1-7 passed for this row of the allow-list. */
  checked(route: Route): void {
    this.checksEnd = epochNow();
    this.route = route;
  }

  /** Step 8 decided, for this bucket (`number:<id>` or `waba:<id>`). */
  limited(bucket: string, decision: Decision): void {
    this.limitEnd = epochNow();
    this.rateLimit = { bucket, decision };
  }

  /**
   * A span under `parent`, given its attributes once it exists: the SDK checks the attributes a
   * span is started with twice (before and after sampling), setAttributes once.
   */
  private span(
    name: string,
    parent: Context,
    startTime: number,
    attributes: Attributes | null,
    kind = SpanKind.INTERNAL,
  ): Span {
    const span = this.tracing.tracer.startSpan(name, { kind, startTime }, parent);
    if (attributes !== null && span.isRecording()) span.setAttributes(attributes);
    return span;
  }

  /**
   * Makes and ends the call's span; with span detail `full`, its steps' spans too. With `call` (the
   * default) what they found goes on the call's span, the fewest attributes that say it (each costs
   * the SDK and the export): upstream's URL is UPSTREAM_URL and the call's own path.
   */
  end(status: number, outcome: CallOutcome): void {
    const ended = epochNow();
    const route = this.route?.template ?? null;
    const call = this.span(
      route === null ? this.method : `${this.method} ${route}`,
      this.parent,
      this.started,
      null,
      SpanKind.SERVER,
    );
    // Not sampled: its children would not be either.
    if (!call.isRecording()) return;
    const attributes = this.callAttributes(status, outcome, route);
    if (status >= 500) call.setStatus({ code: SpanStatusCode.ERROR });
    const failed = this.checksEnd === 0 ? { "switchboard.check.failed": outcome.error ?? "unexpected" } : null;
    const limit = this.rateLimit && {
      "switchboard.ratelimit.bucket": this.rateLimit.bucket,
      "switchboard.ratelimit.allowed": this.rateLimit.decision.allowed,
      "switchboard.ratelimit.limit": this.rateLimit.decision.limit,
      "switchboard.ratelimit.remaining": this.rateLimit.decision.remaining,
    };
    const forwarded = this.rateLimit?.decision.allowed === true;
    if (this.tracing.detail === "full") {
      this.children(call, ended, status, outcome, failed, limit, forwarded);
    } else {
      Object.assign(attributes, failed, limit);
      if (forwarded) this.upstreamAttributes(attributes, ended, status, outcome);
    }
    call.setAttributes(attributes);
    call.end(ended);
  }

  /** The call's own attributes, whatever the span detail. */
  private callAttributes(status: number, outcome: CallOutcome, route: string | null): Attributes {
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: this.method,
      [ATTR_URL_PATH]: this.path,
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: status,
      [ATTR_REQUEST_ID]: this.requestId,
    };
    if (route !== null) attributes[ATTR_HTTP_ROUTE] = route;
    if (outcome.code !== null) attributes["switchboard.error.code"] = outcome.code;
    if (outcome.error !== null) attributes["switchboard.error.name"] = outcome.error;
    if (status >= 500) attributes[ATTR_ERROR_TYPE] = String(status);
    return attributes;
  }

  /** With span detail `call`: the upstream request of step 9 on the call's span. */
  private upstreamAttributes(attributes: Attributes, ended: number, status: number, outcome: CallOutcome): void {
    attributes["switchboard.upstream.duration_ms"] = Math.round((ended - this.limitEnd) * 1000) / 1000;
    // Our error here means upstream did not answer (time-out, unreachable) or the body was cut off.
    if (outcome.code === null) attributes["switchboard.upstream.status_code"] = status;
    else attributes["switchboard.upstream.error"] = outcome.error ?? "unexpected";
  }

  /** OTEL_SPAN_DETAIL=full: the checks of steps 1-7, the rate limit of step 8 and the upstream request of step 9, as the call's children. */
  private children(
    call: Span,
    ended: number,
    status: number,
    outcome: CallOutcome,
    failed: Attributes | null,
    limit: Attributes | null,
    forwarded: boolean,
  ): void {
    const parent = under(call);
    const checksEnd = this.checksEnd || ended;
    this.span("proxy checks", parent, this.started, failed).end(checksEnd);
    if (limit === null) return;
    this.span("rate limit", parent, checksEnd, limit).end(this.limitEnd);
    if (!forwarded) return;
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: this.method,
      // Without the query: it carries our appsecret_proof.
      [ATTR_URL_FULL]: `${this.upstream.url}${this.path}`,
      [ATTR_SERVER_ADDRESS]: this.upstream.host,
      [ATTR_SERVER_PORT]: this.upstream.port,
    };
    if (outcome.code === null) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = status;
    else attributes[ATTR_ERROR_TYPE] = outcome.error ?? "unexpected";
    const upstream = this.span(this.method, parent, this.limitEnd, attributes, SpanKind.CLIENT);
    if (outcome.code !== null || status >= 500) upstream.setStatus({ code: SpanStatusCode.ERROR });
    upstream.end(ended);
  }
}
