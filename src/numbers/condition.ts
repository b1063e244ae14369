import { LIMITS, numberLimit } from "../limits/policy.ts";
import type { NumberKind, PhoneNumber, Waba } from "../store/types.ts";

/**
 * A number's condition as its owner should read it: whether the proxy will forward calls for it,
 * why not (the same words as the 422 of SPEC 7.2) and what to do about it. The WABA's state comes
 * first because the proxy checks it first: a revoked token stops every number on the WABA.
 */
export interface NumberCondition {
  usable: boolean;
  /** One line, e.g. "WABA token revoked". */
  label: string;
  /** What the owner can do about it; null when nothing is needed. */
  action: string | null;
}

export function numberCondition(number: PhoneNumber, waba: Waba | undefined): NumberCondition {
  if (!waba || waba.status === "disconnected") {
    return { usable: false, label: "WABA disconnected", action: "Connect the WABA again (Connect a number, with the same WABA id) or ask your operator." };
  }
  if (waba.status === "token_revoked") {
    return {
      usable: false,
      label: "WABA token revoked",
      action: waba.appSecret !== null
        ? "Reconnect in the dashboard: connect the number again with a new access token for this WABA."
        : "Reconnect in the dashboard: ask your operator to renew the WABA's access token.",
    };
  }
  switch (number.status) {
    case "connected":
      return { usable: true, label: "Connected", action: null };
    case "disconnected":
      return { usable: false, label: "Number disconnected", action: "Connect the number again, or ask your operator." };
    case "restricted":
      return { usable: false, label: "Number restricted", action: "The platform restricted this number (error 131031). Resolve it in the platform's business settings, then ask your operator to restore it." };
    case "flagged":
      return { usable: false, label: "Number flagged", action: "The platform blocked this number for a while (error 368). Wait for the block to end, then ask your operator to restore it." };
    case "not_registered":
      return { usable: false, label: "Number not registered", action: "Register the number with the platform (error 133010), then ask your operator to restore it." };
  }
}

/** Requests per second of a number's own bucket (SPEC 8.1), as the proxy applies it. */
export const numberRateLimit = (number: Pick<PhoneNumber, "kind" | "throughputLevel">): number => numberLimit(number).capacity;

/** Requests per hour of a WABA's bucket (SPEC 8.1). */
export const WABA_RATE_LIMIT_PER_HOUR = LIMITS.waba.capacity;

export const KIND_NAMES: Record<NumberKind, string> = {
  sandbox: "Sandbox",
  byo: "Bring your own",
  embedded: "Embedded signup",
  coexistence: "Coexistence",
};
