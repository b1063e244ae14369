import type { Config } from "../config/config.ts";
import { appsecretProof } from "../crypto/appsecret-proof.ts";
import type { Fetch } from "../runtime/fetch.ts";
import { upstreamFault, type UpstreamFault } from "./state-change.ts";

/** A call of the service's own to upstream: its JSON answer, or why it failed in words with the platform's error when it gave one. */
export type GraphResult =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; reason: string; fault?: UpstreamFault };

export interface GraphCall {
  method: "GET" | "POST";
  /** After the version: `{id}` or `{id}/{edge}`. */
  path: string;
  query?: Record<string, string>;
  /** Sent as the bearer token with its `appsecret_proof` (the service's app secret when `appSecret` is null). */
  token?: { accessToken: string; appSecret: string | null };
  json?: unknown;
}

/**
 * Calls upstream for the service itself (number syncs, Embedded Signup's steps, coexistence
 * syncs). Never throws: a failure comes back as a reason a person can read.
 */
export async function graphCall(deps: { config: Config; fetch: Fetch }, call: GraphCall): Promise<GraphResult> {
  const { config } = deps;
  const query = new URLSearchParams(call.query);
  if (call.token)
    query.set("appsecret_proof", appsecretProof(call.token.accessToken, call.token.appSecret ?? config.appSecret));
  const url = `${config.upstreamUrl}/${config.upstreamApiVersion}/${call.path}?${query}`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (call.token) headers.authorization = `Bearer ${call.token.accessToken}`;
  if (call.json !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await deps.fetch(url, {
      method: call.method,
      headers,
      body: call.json === undefined ? undefined : JSON.stringify(call.json),
      redirect: "manual",
      signal: AbortSignal.timeout(config.upstreamTimeoutMs),
    });
  } catch (error) {
    return { ok: false, reason: unreached(error) };
  }
  return answered(response);
}

/** Why upstream gave no answer, in words. */
function unreached(error: unknown): string {
  const name = error instanceof Error ? error.name : "Error";
  return name === "TimeoutError"
    ? "upstream did not answer in time"
    : `upstream could not be reached (${String((error as Error).message ?? error)})`;
}

/** Upstream's answer: its JSON object when it succeeded, else why not, with the platform's error when it sent one. */
async function answered(response: Response): Promise<GraphResult> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, reason: `upstream answered ${response.status} with a body that is not JSON` };
  }
  if (!response.ok || body === null || typeof body !== "object") {
    const fault = upstreamFault(body);
    return {
      ok: false,
      reason: `upstream answered ${response.status}${fault ? ` (code ${fault.code})` : ""}: ${fault?.message || "no message"}`,
      ...(fault ? { fault } : {}),
    };
  }
  return { ok: true, body: body as Record<string, unknown> };
}
