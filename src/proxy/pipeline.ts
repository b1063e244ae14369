import { errorResponse, ERRORS, type ErrorName } from "../errors/catalog.ts";
import { rawTarget, type RawTarget } from "../http/raw-target.ts";
import { rateLimitStep } from "../limits/fail-open.ts";
import type { RateLimiter } from "../limits/limiter.ts";
import { numberBucket, wabaBucket } from "../limits/policy.ts";
import type { Decision } from "../limits/token-bucket.ts";
import type { Deps } from "../deps.ts";
import { timeOrderedIdSource } from "../runtime/random.ts";
import { MAX_BODY_BYTES } from "./body-limit.ts";
import { authenticate, billingError, connectionError, resolveTarget, testKeyRefused, type Target } from "./checks.ts";
import { proxyCallTracer, type CallOutcome, type ProxyCallTrace } from "./call-trace.ts";
import { forward, type Exchange } from "./forward.ts";
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
  noteCaller,
  noteTarget,
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

const bucketOf = (target: Target) =>
  target.route.bucket === "number" && target.number ? numberBucket(target.number) : wabaBucket(target.waba.wabaId);

/** Before the rate limit has decided: no headers of ours yet. */
const NONE: Record<string, string> = Object.freeze({});

/** What every call shares, made once by createProxy. */
interface Proxying {
  deps: ProxyDeps;
  requestLog: RequestLog | null;
  proofs: ProofCache;
  bodyDeadline: Exchange["bodyDeadline"];
  /** An upstream error body has passed: its code goes on the record, and a state change it calls for is made. */
  inspected(bytes: Uint8Array, call: ProxyCall): void;
}

/**
 * One proxied call as it goes: how it ended so far (its outcome), its record, and what forward
 * needs to send it (the Exchange). One object a call, its steps methods, instead of an outcome, an
 * exchange and a closure for each of its hooks (fewer objects a call for the collector: the tail,
 * issue 40).
 */
class ProxyCall implements CallOutcome, Exchange {
  code: number | string | null = null;
  error: ErrorName | null = null;
  /** How many of the call's parts have not ended (see complete). */
  parts = 1;
  url = "";
  token = "";
  timeoutMs = 0;
  headers = NONE;
  target: Target | null = null;
  onSuccessBody?: (this: ProxyCall, bytes: Uint8Array) => void;
  readonly bufferBytes: number;
  readonly bodyDeadline: Exchange["bodyDeadline"];

  constructor(
    private readonly proxying: Proxying,
    readonly requestId: string,
    readonly record: RequestRecord,
    readonly trace: ProxyCallTrace | undefined,
  ) {
    this.bufferBytes = proxying.deps.config.proxyBodyBufferBytes;
    this.bodyDeadline = proxying.bodyDeadline;
  }

  fail(name: ErrorName, headers?: Record<string, string>): Response {
    this.code = ERRORS[name].code;
    this.error = name;
    return errorResponse(name, this.requestId, { headers });
  }

  /** Step 9's request to the call's target: where it goes, with which token and time-out. */
  aim(path: string, query: string | null): void {
    const { config } = this.proxying.deps;
    const target = this.target as Target;
    this.url = `${config.upstreamUrl}${path}?${upstreamQuery(query, this.proxying.proofs.for(target.waba))}`;
    this.token = target.waba.accessToken;
    this.timeoutMs = target.route.timeout === "media" ? config.upstreamMediaTimeoutMs : config.upstreamTimeoutMs;
    if (this.proxying.requestLog && target.route.edge === "messages" && target.route.method === "POST")
      this.onSuccessBody = noteMessageId;
  }

  onHeaders(ms: number): void {
    noteUpstreamLatency(this.record, ms);
    this.proxying.deps.metrics.upstreamLatency.observe(ms / 1000);
  }

  inspectError(): (bytes: Uint8Array | null) => void {
    // The record waits for the body: its upstream error code is in it.
    this.parts++;
    return (bytes) => {
      if (bytes) this.proxying.inspected(bytes, this);
      this.complete();
    };
  }

  /**
   * One part of the call has ended (the answer's headers, or an upstream error's body); once every
   * part has, its record is complete and goes to the log (a batch may go to the writer any time).
   */
  complete(): void {
    const log = this.proxying.requestLog;
    if (--this.parts === 0 && log && hasCaller(this.record)) log.add(this.record);
  }
}

/** A send's answer has been read whole: its message id goes on the record. */
function noteMessageId(this: ProxyCall, bytes: Uint8Array): void {
  this.record.messageId = messageIdIn(bytes);
}

/** What the checks look things up in. */
interface Checking {
  directory: ProxyDeps["store"]["directory"];
  matchRoute: ReturnType<typeof routeMatcher>;
}

/** docs/proxy.md#order-of-checks, steps 1 to 7: the call's target, or why it is refused. */
function checked(
  { directory, matchRoute }: Checking,
  request: Request,
  { path, query }: RawTarget,
  length: string | null,
  record: RequestRecord,
) {
  const match = matchRoute(request.method, path, query); //                         1. path shape and method
  if (!match) return "unknown_route";
  const key = authenticate(directory, request.headers.get("authorization")); //     2. API key
  if (!key) return "invalid_api_key";
  noteCaller(record, key);
  const billing = billingError(directory.account(key.accountId)); //                  3. billing
  if (billing) return billing;
  const target = resolveTarget(directory, match, key.accountId); //                   4. allow-list and ownership
  if (!target) return "unknown_route";
  noteTarget(record, target);
  if (testKeyRefused(directory, key, target)) return "test_key_on_live_number"; //     5. test key
  const unusable = connectionError(target); //                                         6. number and WABA state
  if (unusable) return unusable;
  if (length !== null && Number(length) > MAX_BODY_BYTES) return "payload_too_large"; // 7. declared size
  return target;
}

/** What every call shares. */
function proxyingOf(deps: ProxyDeps, requestLog: RequestLog | null): Proxying {
  const { config, logger, metrics } = deps;
  const directory = deps.store.directory;
  return {
    deps,
    requestLog,
    proofs: new ProofCache(config.appSecret),
    // The same for every call: made once, not per call.
    bodyDeadline: {
      clock: deps.clock,
      ms: config.requestBodyTimeoutMs,
      missed: () => metrics.bodyTimeouts.inc({ group: "proxy" }),
    },
    inspected(bytes, call) {
      if (requestLog) noteUpstreamError(call.record, bytes);
      const target = call.target as Target;
      const effect = effectOf(bytes, target);
      // After the caller's answer has gone out: the state write must not hold it back.
      if (effect)
        setImmediate(() =>
          applyEffect({ directory, clock: deps.clock, logger }, effect, call.requestId).catch((error: unknown) =>
            logger.error("recording an upstream state change failed", { error }),
          ),
        );
    },
  };
}

/** Builds the proxy: a function from a caller's request to the response it gets (docs/proxy.md). */
export function createProxy(deps: ProxyDeps, limiter: RateLimiter, requestLog: RequestLog | null = null) {
  const { config, store, logger, metrics } = deps;
  const directory = store.directory;
  // Time-ordered: the request log's rows are keyed by them, and fill its index at one end.
  const nextRequestId = timeOrderedIdSource(deps.random, "req", 20);
  const count = outcomeCounter(metrics);
  const logAll = config.logLevel === "debug";
  const startTrace = proxyCallTracer(deps.tracing, config.upstreamUrl);
  const decide = rateLimitStep(limiter, deps);
  const checking: Checking = { directory, matchRoute: routeMatcher(allowList(config.platform)) };
  const proxying = proxyingOf(deps, requestLog);

  /**
   * docs/proxy.md#order-of-checks: every check in order, stopping at the first failure. Not an
   * async function: a call whose bucket answers at once (in memory) costs no frame of its own and
   * hands forward's promise straight back, without another turn to resolve one promise with another.
   */
  function pipeline(
    request: Request,
    raw: RawTarget,
    call: ProxyCall,
    length: string | null,
  ): Response | Promise<Response> {
    const target = checked(checking, request, raw, length, call.record);
    if (typeof target === "string") return call.fail(target);
    call.trace?.checked(target.route);
    call.target = target;
    const bucket = bucketOf(target);
    const decided = decide(bucket); //                                                    8. rate limit
    if (decided instanceof Promise)
      return decided.then((decision) => limited(request, raw, call, length, bucket.key, decision));
    return limited(request, raw, call, length, bucket.key, decided);
  }

  /** The rate limit has decided (step 8): refused, or forwarded (step 9). */
  function limited(
    request: Request,
    raw: RawTarget,
    call: ProxyCall,
    length: string | null,
    bucketKey: string,
    decision: Decision,
  ): Response | Promise<Response> {
    call.trace?.limited(bucketKey, decision);
    const headers = rateLimitHeaders(decision);
    headers["x-proxy-request-id"] = call.requestId;
    call.headers = headers;
    if (!decision.allowed) return call.fail("rate_limited", headers);
    call.aim(raw.path, raw.query);
    return forward(deps.fetch, request, length, call); //                                9. forward
  }

  /** Every failure is logged; successes only at debug: a JSON line per call costs about a tenth of the proxy's throughput, and the metrics count them anyway. */
  function logged(request: Request, path: string, call: ProxyCall, status: number, started: number): void {
    if (status < 400 && !logAll) return;
    const fields = {
      request_id: call.requestId,
      method: request.method,
      path,
      status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    };
    if (status >= 400) logger.info("request", fields);
    else logger.debug("request", fields);
  }

  /** `target` is the request's raw target when the caller has already read it. */
  return async function handle(request: Request, target: RawTarget = rawTarget(request.url)): Promise<Response> {
    const at = deps.clock.now();
    const requestId = nextRequestId(at);
    const started = performance.now();
    const record = startRecord(requestId, at, request.method);
    const call = new ProxyCall(proxying, requestId, record, startTrace?.(request, target.path, requestId));
    const length = request.headers.get("content-length");
    let response: Response;
    try {
      response = await pipeline(request, target, call, length);
    } catch (error) {
      logger.error("proxy failed", { request_id: requestId, error });
      response = call.fail("upstream_unreachable");
    }
    call.trace?.end(response.status, call);
    count(call.code, response.status);
    if (requestLog && hasCaller(record))
      finishRecord(record, response, typeof call.code === "number" ? call.code : null, length);
    call.complete();
    logged(request, target.path, call, response.status, started);
    return response;
  };
}
