import type { Config } from "../config/config.ts";
import { appsecretProof } from "../crypto/appsecret-proof.ts";
import type { Fetch } from "../runtime/deps.ts";
import { upstreamFault, type UpstreamFault } from "./state-change.ts";
import type { PhoneNumber, ThroughputLevel, Waba } from "../store/types.ts";

export interface NumberDetails {
  throughputLevel: ThroughputLevel;
  displayPhoneNumber: string | null;
  verifiedName: string | null;
}

/** A failed read says why in words, and gives the platform's error when it answered one. */
export type SyncResult = { ok: true; details: NumberDetails } | { ok: false; reason: string; fault?: UpstreamFault };

const SYNC_FIELDS = "throughput,display_phone_number,verified_name,quality_rating";

/**
 * Reads a number's details from upstream. Never throws: a failure comes back as a reason the
 * operator can read, and the caller keeps the number on its previous (or standard) level.
 */
export async function fetchNumberDetails(
  deps: { config: Config; fetch: Fetch },
  number: Pick<PhoneNumber, "phoneNumberId">,
  waba: Pick<Waba, "accessToken" | "appSecret">,
): Promise<SyncResult> {
  const { config } = deps;
  const proof = appsecretProof(waba.accessToken, waba.appSecret ?? config.appSecret);
  const url = `${config.upstreamUrl}/${config.upstreamApiVersion}/${encodeURIComponent(number.phoneNumberId)}?fields=${SYNC_FIELDS}&appsecret_proof=${proof}`;
  let response: Response;
  try {
    response = await deps.fetch(url, {
      headers: { authorization: `Bearer ${waba.accessToken}`, accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(config.upstreamTimeoutMs),
    });
  } catch (error) {
    const name = error instanceof Error ? error.name : "Error";
    return { ok: false, reason: name === "TimeoutError" ? "upstream did not answer in time" : `upstream could not be reached (${String((error as Error).message ?? error)})` };
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, reason: `upstream answered ${response.status} with a body that is not JSON` };
  }
  if (!response.ok) {
    const fault = upstreamFault(body);
    return {
      ok: false,
      reason: `upstream answered ${response.status}${fault ? ` (code ${fault.code})` : ""}: ${fault?.message || "no message"}`,
      ...(fault ? { fault } : {}),
    };
  }
  const data = body as { throughput?: { level?: string }; display_phone_number?: string; verified_name?: string };
  return {
    ok: true,
    details: {
      throughputLevel: data.throughput?.level === "HIGH" ? "HIGH" : "STANDARD",
      displayPhoneNumber: data.display_phone_number ?? null,
      verifiedName: data.verified_name ?? null,
    },
  };
}
