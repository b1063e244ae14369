import type { Fetch } from "../runtime/fetch.ts";
import type { Resolver } from "../runtime/resolver.ts";
import { blockedReason } from "./address-policy.ts";
import { formatIp, parseIp } from "../ip/ip.ts";
import type { UrlChecker } from "./url-rules.ts";

/** Only this much of a receiver's answer is read and kept (docs/webhooks.md#retries). */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface SafePostOptions {
  resolver: Resolver;
  fetch: Fetch;
  urls: UrlChecker;
  /** Total budget: DNS, connect, TLS, response headers and the excerpt. */
  timeoutMs: number;
  /** Extra certificate authorities to trust (tests use a private CA); verification is never off. */
  ca?: string;
}

/** What happened to one POST; how that counts for a delivery is decided elsewhere. */
export type PostOutcome =
  | { kind: "response"; status: number; excerpt: string; durationMs: number }
  | { kind: "blocked"; error: string; durationMs: number }
  | { kind: "failed"; error: string; durationMs: number };

function withTimeout<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `timed out after ${timeoutMs} ms`;
  const code = typeof e?.code === "string" ? e.code : "";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `DNS lookup failed (${code})`;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET") return "connection reset";
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO/.test(code)) return `TLS error: ${code}`;
  return `${code ? `${code}: ` : ""}${e?.message ?? String(error)}`;
}

const utf8 = new TextDecoder();

async function readExcerpt(response: Response): Promise<string> {
  // A short answer of declared length, sent as is (no content-encoding that fetch would expand),
  // is read whole: its stream and reader (`response.body` makes them) cost several objects and
  // promises per attempt.
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared <= RESPONSE_EXCERPT_BYTES && !response.headers.has("content-encoding"))
    return utf8.decode(await response.bytes());
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < RESPONSE_EXCERPT_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  if (size >= RESPONSE_EXCERPT_BYTES) await reader.cancel().catch(() => undefined);
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
  return utf8.decode(bytes);
}

/**
 * The address to post to for a hostname: its first answer, once every answer passed the address
 * policy; or why not (no answer, or one blocked).
 */
async function resolvedAddress(
  hostname: string,
  options: SafePostOptions,
  signal: AbortSignal,
): Promise<string | { kind: "failed" | "blocked"; error: string }> {
  const answers = await withTimeout(options.resolver(hostname), signal);
  const [first] = answers;
  if (first === undefined) return { kind: "failed", error: "DNS lookup returned no address" };
  for (const answer of answers) {
    if (blockedReason(answer, options.urls.rules.policy) !== null) {
      const ip = parseIp(answer);
      return { kind: "blocked", error: `blocked: resolved to ${ip ? formatIp(ip) : answer}` };
    }
  }
  // blockedReason refuses what is not an IP address, so the first answer is one.
  const pinnedIp = parseIp(first);
  if (!pinnedIp) throw new Error(`${first} passed the address policy without being an IP address`);
  return formatIp(pinnedIp);
}

/** The URL with the checked address in place of its hostname. */
function pinnedUrl(url: URL, address: string): string {
  const hostPart = address.includes(":") ? `[${address}]` : address;
  const port = url.port === "" ? "" : `:${url.port}`;
  return `${url.protocol}//${hostPart}${port}${url.pathname}${url.search}`;
}

/**
 * POSTs (or, for Verify, GETs) to a webhook URL without ever reaching a blocked address (docs/webhooks.md#url-rules). The name is resolved
 * once with the injected resolver; every answer must pass the address policy; then the request
 * goes to that checked address itself, with the hostname in `Host` and as TLS SNI and the name
 * the certificate is verified against. Bun's fetch would resolve a name again on its own, so it is
 * never handed one: a second, rebinding DNS answer cannot be used. Redirects are not followed.
 */
export async function safePost(
  target: string,
  request: { headers: Record<string, string>; body?: Uint8Array<ArrayBuffer>; method?: "POST" | "GET" },
  options: SafePostOptions,
): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const checked = options.urls.check(target);
  if (!checked.ok) return { kind: "blocked", error: `blocked: ${checked.reason}`, durationMs: elapsed() };
  const { url } = checked;
  // Not AbortSignal.timeout: its timer lives on for the whole budget after the answer came, so at
  // thousands of deliveries a second tens of thousands of timers and signals would pile up.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${options.timeoutMs} ms`, "TimeoutError")),
    options.timeoutMs,
  );
  const signal = controller.signal;
  try {
    const address = checked.address ?? (await resolvedAddress(url.hostname, options, signal));
    if (typeof address !== "string") return { ...address, durationMs: elapsed() };
    const pinned = pinnedUrl(url, address);
    const init: BunFetchRequestInit = {
      method: request.method ?? "POST",
      headers: { ...request.headers, host: url.host },
      body: request.body,
      redirect: "manual",
      signal,
    };
    if (url.protocol === "https:") {
      init.tls = {
        serverName: checked.address === null ? url.hostname : undefined,
        ...(options.ca ? { ca: options.ca } : {}),
      };
    }
    const response = await options.fetch(pinned, init);
    const excerpt = await readExcerpt(response);
    return { kind: "response", status: response.status, excerpt, durationMs: elapsed() };
  } catch (error) {
    return { kind: "failed", error: describe(error, options.timeoutMs), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
