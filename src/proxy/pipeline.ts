import { errorResponse, ERRORS, type ErrorName } from "../errors/catalog.ts";
import { rawTarget, type RawTarget } from "../http/raw-target.ts";
import { rateLimitStep } from "../limits/fail-open.ts";
import type { RateLimiter } from "../limits/limiter.ts";
import { numberBucket, wabaBucket } from "../limits/policy.ts";
import type { Deps } from "../deps.ts";
import { timeOrderedIdSource } from "../runtime/random.ts";
import { MAX_BODY_BYTES } from "./body-limit.ts";
import { authenticate, billingError, connectionError, resolveTarget, testKeyRefused, type Target } from "./checks.ts";
import { proxyCallTracer, type CallOutcome, type ProxyCallTrace } from "./call-trace.ts";
import { forward } from "./forward.ts";
import { allowList } from "./allow-list.ts";
import { routeMatcher } from "./match.ts";
import { rateLimitHeaders } from "./headers.ts";
import { ProofCache } from "./proof-cache.ts";
import { upstreamQuery } from "./query.ts";
import { applyEffect } from "../numbers/state-change.ts";
import {
  finishRecord,
  hasCaller,
  messageIdIn,
  noteUpstreamError,
  noteUpstreamLatency,
  startRecord,
} from "./capture.ts";
import type { RequestLog } from "../requests/log.ts";
import type { RequestRecord } from "../store/requests.ts";
import { effectOf } from "./side-effects.ts";

export type ProxyDeps = Pick<
  Deps,
  "config" | "store" | "clock" | "random" | "fetch" | "logger" | "metrics" | "tracing"
>;

/**
 * Counts a proxied call: our own errors by code, upstream answers by status (the two never share
 * a label). prom-client's `inc` hashes labels and updates its store on every call; here a call
 * bumps a plain tally, and the tallies are added to the counters whenever the registry is read.
 */
function outcomeCounter(metrics: ProxyDeps["metrics"]) {
  type Tally = { outcome: { inc(n: number): void }; group: { inc(n: number): void }; n: number };
  const tallies = new Map<number | string, Tally>();
  metrics.beforeCollect.add(() => {
    for (const tally of tallies.values()) {
      if (tally.n === 0) continue;
      tally.outcome.inc(tally.n);
      tally.group.inc(tally.n);
      tally.n = 0;
    }
  });
  return (code: number | string | null, status: number) => {
    // Our codes (1001…) and upstream statuses (100…599) never collide as keys.
    const key = code ?? status;
    let tally = tallies.get(key);
    if (!tally) {
      const outcome = code === null ? `upstream_${status}` : String(code);
      tally = {
        outcome: metrics.proxyRequests.labels(outcome),
        group: metrics.httpRequests.labels("proxy", `${Math.floor(status / 100)}xx`),
        n: 0,
      };
      tallies.set(key, tally);
    }
    tally.n++;
  };
}

/** A call as it goes: how it ended so far, and how many of its parts have not (see complete). */
interface Call extends CallOutcome {
  parts: number;
}

const bucketOf = (target: Target) =>
  target.route.bucket === "number" && target.number ? numberBucket(target.number) : wabaBucket(target.waba.wabaId);

/** Builds the proxy: a function from a caller's request to the response it gets (docs/proxy.md). */
export function createProxy(deps: ProxyDeps, limiter: RateLimiter, requestLog: RequestLog | null = null) {
  const { config, store, logger, metrics } = deps;
  const directory = store.directory;
  const proofs = new ProofCache(config.appSecret);
  // Time-ordered: the request log's rows are keyed by them, and fill its index at one end.
  const nextRequestId = timeOrderedIdSource(deps.random, "req", 20);
  const count = outcomeCounter(metrics);
  const logAll = config.logLevel === "debug";
  const startTrace = proxyCallTracer(deps.tracing, config.upstreamUrl);
  const decide = rateLimitStep(limiter, deps);
  const matchRoute = routeMatcher(allowList(config.platform));

  /** An upstream error body has passed: its code goes on the record, and a state change it calls for is made. */
  function inspected(bytes: Uint8Array, record: RequestRecord, target: Target, requestId: string): void {
    if (requestLog) noteUpstreamError(record, bytes);
    const effect = effectOf(bytes, target);
    // After the caller's answer has gone out: the state write must not hold it back.
    if (effect)
      setImmediate(() =>
        applyEffect({ directory, clock: deps.clock, logger }, effect, requestId).catch((error: unknown) =>
          logger.error("recording an upstream state change failed", { error }),
        ),
      );
  }

  /**
   * One part of the call has ended (the answer's headers, or an upstream error's body); once every
   * part has, its record is complete and goes to the log (a batch may go to the writer any time).
   */
  function complete(outcome: Call, record: RequestRecord): void {
    if (--outcome.parts === 0 && requestLog && hasCaller(record)) requestLog.add(record);
  }

  /** docs/proxy.md#order-of-checks: every check in order, stopping at the first failure. */
  async function pipeline(
    request: Request,
    { path, query }: RawTarget,
    requestId: string,
    outcome: Call,
    record: RequestRecord,
    trace?: ProxyCallTrace,
  ): Promise<Response> {
    const fail = (name: ErrorName, headers?: Record<string, string>) => {
      outcome.code = ERRORS[name].code;
      outcome.error = name;
      return errorResponse(name, requestId, { headers });
    };

    const match = matchRoute(request.method, path, query); //                         1. path shape and method
    if (!match) return fail("unknown_route");
    const key = authenticate(directory, request.headers.get("authorization")); //     2. API key
    if (!key) return fail("invalid_api_key");
    record.accountId = key.accountId;
    record.apiKeyId = key.id;
    const billing = billingError(directory.account(key.accountId)); //                  3. billing
    if (billing) return fail(billing);
    const target = resolveTarget(directory, match, key.accountId); //                   4. allow-list and ownership
    if (!target) return fail("unknown_route");
    record.route = target.route.label;
    record.phoneNumberId = target.number?.phoneNumberId ?? null;
    record.wabaId = target.waba.wabaId;
    if (testKeyRefused(directory, key, target)) return fail("test_key_on_live_number"); // 5. test key
    const unusable = connectionError(target); //                                         6. number and WABA state
    if (unusable) return fail(unusable);
    const length = request.headers.get("content-length");
    if (length !== null && Number(length) > MAX_BODY_BYTES) return fail("payload_too_large"); // 7. declared size
    trace?.checked(target.route);
    const bucket = bucketOf(target);
    const decided = decide(bucket); //                                                    8. rate limit
    const decision = decided instanceof Promise ? await decided : decided;
    trace?.limited(bucket.key, decision);
    const headers = { ...rateLimitHeaders(decision), "x-proxy-request-id": requestId };
    if (!decision.allowed) return fail("rate_limited", headers);
    return forward(deps.fetch, request, length, {
      //                                     9. forward
      url: `${config.upstreamUrl}${path}?${upstreamQuery(query, proofs.for(target.waba))}`,
      token: target.waba.accessToken,
      timeoutMs: target.route.timeout === "media" ? config.upstreamMediaTimeoutMs : config.upstreamTimeoutMs,
      bufferBytes: config.proxyBodyBufferBytes,
      bodyDeadline,
      headers,
      fail,
      onHeaders: (ms) => {
        noteUpstreamLatency(record, ms);
        metrics.upstreamLatency.observe(ms / 1000);
      },
      onSuccessBody:
        requestLog && target.route.edge === "messages" && target.route.method === "POST"
          ? (bytes) => (record.messageId = messageIdIn(bytes))
          : undefined,
      inspectError() {
        // The record waits for the body: its upstream error code is in it.
        outcome.parts++;
        return (bytes) => {
          if (bytes) inspected(bytes, record, target, requestId);
          complete(outcome, record);
        };
      },
    });
  }

  /** `target` is the request's raw target when the caller has already read it. */
  // The same for every call: made once, not per call.
  const bodyDeadline = {
    clock: deps.clock,
    ms: config.requestBodyTimeoutMs,
    missed: () => metrics.bodyTimeouts.inc({ group: "proxy" }),
  };
  return async function handle(request: Request, target: RawTarget = rawTarget(request.url)): Promise<Response> {
    const at = deps.clock.now();
    const requestId = nextRequestId(at);
    const started = performance.now();
    const outcome: Call = { code: null, error: null, parts: 1 };
    const record = startRecord(requestId, at, request.method);
    const trace = startTrace?.(request, target.path, requestId);
    let response: Response;
    try {
      response = await pipeline(request, target, requestId, outcome, record, trace);
    } catch (error) {
      logger.error("proxy failed", { request_id: requestId, error });
      response = errorResponse("upstream_unreachable", requestId);
      outcome.code = ERRORS.upstream_unreachable.code;
      outcome.error = "upstream_unreachable";
    }
    trace?.end(response.status, outcome);
    count(outcome.code, response.status);
    if (requestLog && hasCaller(record))
      finishRecord(
        record,
        response,
        typeof outcome.code === "number" ? outcome.code : null,
        request.headers.get("content-length"),
      );
    complete(outcome, record);
    // Every failure is logged; successes only at debug: a JSON line per call costs about a tenth of
    // the proxy's throughput, and the metrics count them anyway.
    if (response.status >= 400 || logAll) {
      const fields = {
        request_id: requestId,
        method: request.method,
        path: target.path,
        status: response.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      };
      if (response.status >= 400) logger.info("request", fields);
      else logger.debug("request", fields);
    }
    return response;
  };
}
