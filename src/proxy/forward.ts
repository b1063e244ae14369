import type { ErrorName } from "../errors/catalog.ts";
import { bytesWithin } from "../http/read-body.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Fetch } from "../runtime/fetch.ts";
import { countedBody, MAX_BODY_BYTES } from "./body-limit.ts";
import { keepResponseHeaders, PASSED_REQUEST_HEADERS, passedResponseHeaders } from "./headers.ts";
import { MESSAGE_ID_SCAN_BYTES } from "./capture.ts";
import { INSPECT_LIMIT, inspectedBody } from "./side-effects.ts";

export interface Exchange {
  url: string;
  token: string;
  timeoutMs: number;
  /** A body declaring at most this many bytes is read before it is sent (see forward). */
  bufferBytes: number;
  /** How long such a body may take to arrive whole (REQUEST_BODY_TIMEOUT_MS); `missed` is told when one did not. */
  bodyDeadline: { clock: Clock; ms: number; missed(): void };
  /** RateLimit-* and X-Proxy-Request-Id, added to whatever the caller gets from here on. */
  headers: Record<string, string>;
  /** Renders one of our errors. */
  fail(name: ErrorName, headers?: Record<string, string>): Response;
  /**
   * Called when an upstream error answer is passed on through a copy of its first 64 KB; returns
   * what is called once that body has ended (with its bytes when they fit), failed or been
   * cancelled (null): the call is only complete then.
   */
  inspectError(): (bytes: Uint8Array | null) => void;
  /** Called when upstream's response headers arrive. */
  onHeaders?(ms: number): void;
  /**
   * Given, a successful answer of at most MESSAGE_ID_SCAN_BYTES is read whole and handed here
   * before the caller gets the same bytes (the request log reads a send's message id from it).
   */
  onSuccessBody?(bytes: Uint8Array): void;
}

type AbortReason = "timeout" | "too_large";

/**
 * Step 9 of docs/proxy.md#order-of-checks: one upstream request, never retried. The answer streams back with only the
 * headers passed back (docs/proxy.md#what-comes-back). Fetch must neither decompress (it would keep stale length and
 * encoding headers) nor follow redirects, and since no Accept-Encoding is sent, upstream never
 * compresses what the caller did not ask for.
 *
 * The body goes upstream byte for byte and is never parsed. A large or chunked body streams as it
 * arrives (a chunked one counted, and cut off past 100 MB). A small declared body (at most
 * `bufferBytes`, 64 KB by default, as nginx's client_body_buffer_size) is read first, at most that
 * much memory per call: it has almost always arrived with the headers, and handed to fetch as
 * bytes it costs a fifth of what a stream does, because Bun's fetch keeps its upstream connection
 * only for a body of known size, and reopens one for about a third of streamed calls (bench/RESULTS.md,
 * Proxy: about 10 µs of CPU per call, the difference between meeting and missing the target).
 * Such a body must arrive whole within the body deadline, or it is 408 `body_timeout` and its
 * connection closed: nothing else would end a caller's trickle (a streamed body is bounded by the
 * upstream time-out, which runs while it is sent).
 */
export async function forward(
  fetch: Fetch,
  request: Request,
  length: string | null,
  exchange: Exchange,
): Promise<Response> {
  const controller = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${exchange.token}` };
  for (const name of PASSED_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  let body: ReturnType<typeof bodyFor> | Uint8Array = bodyFor(request, length, headers, exchange, controller);
  if (body instanceof Promise) {
    const read = await body;
    if (read instanceof Response) return read;
    body = read;
  }

  const started = performance.now();
  const timer = setTimeout(abortWith, exchange.timeoutMs, controller, "timeout");
  let upstream: Response;
  try {
    upstream = await fetch(exchange.url, {
      method: request.method,
      headers,
      body,
      signal: controller.signal,
      redirect: "manual",
      decompress: false,
      duplex: "half",
    } as RequestInit);
  } catch {
    const reason = controller.signal.reason as unknown;
    // docs/proxy.md#rate-limit-headers: a 413 carries no RateLimit-* headers, even this late one.
    if (reason === "too_large") return exchange.fail("payload_too_large");
    return exchange.fail(reason === "timeout" ? "upstream_timeout" : "upstream_unreachable", exchange.headers);
  } finally {
    // The time-out bounds the wait for upstream's answer, not how long its body takes to stream.
    clearTimeout(timer);
  }
  exchange.onHeaders?.(performance.now() - started);
  return answer(upstream, exchange);
}

/** A send's answer read whole and handed to onSuccessBody before the caller gets the same bytes. */
async function readAnswer(upstream: Response, exchange: Exchange): Promise<Response> {
  const headers = passedResponseHeaders(upstream.headers, exchange.headers);
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await upstream.bytes();
  } catch {
    return exchange.fail("upstream_unreachable", exchange.headers);
  }
  exchange.onSuccessBody?.(bytes);
  return new Response(bytes, { status: upstream.status, headers });
}

/** Made once, not a closure per call. */
function abortWith(controller: AbortController, reason: AbortReason): void {
  controller.abort(reason);
}

/**
 * The body to send upstream: a large one as it comes, a chunked one counted, a small declared one
 * read whole (a promise, no async frame for the others), or the answer that ends the call when a
 * small one did not arrive.
 */
function bodyFor(
  request: Request,
  length: string | null,
  headers: Record<string, string>,
  exchange: Exchange,
  controller: AbortController,
): ReadableStream<Uint8Array> | null | Promise<Uint8Array | Response> {
  const declared = length === null ? Number.NaN : Number(length);
  // Bun gives a request a body exactly when it declares a length above 0 or is chunked, and has
  // checked that length against what it reads. A small body is read by Bun's own read without
  // making its stream first (`request.body`), which would cost a call a stream it never reads.
  if (declared > 0 && declared <= exchange.bufferBytes) {
    headers["content-length"] = length as string;
    return readWhole(request, exchange);
  }
  const body = request.body;
  if (!body) return null;
  if (length === null) return countedBody(body, MAX_BODY_BYTES, () => controller.abort("too_large"));
  headers["content-length"] = length;
  return body;
}

/** A small body whole, within the body deadline. */
async function readWhole(request: Request, exchange: Exchange): Promise<Uint8Array | Response> {
  const { clock, ms, missed } = exchange.bodyDeadline;
  let read: Uint8Array | "late";
  try {
    read = await bytesWithin(request, ms, clock);
  } catch {
    // The caller went away mid-body; there is nobody left to answer, and nothing was sent.
    return exchange.fail("upstream_unreachable", exchange.headers);
  }
  if (read !== "late") return read;
  missed();
  return exchange.fail("body_timeout", exchange.headers);
}

/**
 * What the caller gets once upstream has answered (docs/proxy.md#what-comes-back): a promise only
 * when the answer is read first (a send's, for its message id), so that forward hands on a Response.
 */
function answer(upstream: Response, exchange: Exchange): Response | Promise<Response> {
  const declared = Number(upstream.headers.get("content-length") ?? Number.NaN);
  // A declared length above 0 means a body: its stream is not made just to ask (see bodyFor).
  if (exchange.onSuccessBody && upstream.status < 300 && declared > 0 && declared <= MESSAGE_ID_SCAN_BYTES)
    return readAnswer(upstream, exchange);
  const answerHeaders = keepResponseHeaders(upstream.headers, exchange.headers);
  if (upstream.status < 400 || declared > INSPECT_LIMIT || !upstream.body) return upstream;
  return new Response(inspectedBody(upstream.body, exchange.inspectError()), {
    status: upstream.status,
    headers: answerHeaders,
  });
}
