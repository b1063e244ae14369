import type { Config } from "../config/config.ts";
import type { Fetch } from "../runtime/fetch.ts";
import { graphCall } from "./graph-call.ts";
import type { UpstreamFault } from "./state-change.ts";
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
  const result = await graphCall(deps, {
    method: "GET",
    path: encodeURIComponent(number.phoneNumberId),
    query: { fields: SYNC_FIELDS },
    token: waba,
  });
  if (!result.ok) return result;
  const data = result.body as {
    throughput?: { level?: string };
    display_phone_number?: string;
    verified_name?: string;
  };
  return {
    ok: true,
    details: {
      throughputLevel: data.throughput?.level === "HIGH" ? "HIGH" : "STANDARD",
      displayPhoneNumber: data.display_phone_number ?? null,
      verifiedName: data.verified_name ?? null,
    },
  };
}
