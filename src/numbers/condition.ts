import { LIMITS, numberLimit } from "../limits/policy.ts";
import type { NumberKind, PhoneNumber, StatusCause, Waba } from "../store/types.ts";

/**
 * A number's condition as its owner should read it: whether the proxy will forward calls for it,
 * why not (the same words as the 422 of docs/errors.md#proxy-errors) and what to do about it. The WABA's state comes
 * first because the proxy checks it first: a revoked token stops every number on the WABA.
 */
/** A number's condition in one word (for filters) and in words (its label, e.g. "WABA token revoked"). */
export const NUMBER_STATES = {
  connected: "Connected",
  waba_disconnected: "WABA disconnected",
  token_revoked: "WABA token revoked",
  disconnected: "Number disconnected",
  restricted: "Number restricted",
  flagged: "Number flagged",
  not_registered: "Number not registered",
} as const;
export type NumberState = keyof typeof NUMBER_STATES;

export interface NumberCondition {
  usable: boolean;
  state: NumberState;
  /** One line, e.g. "WABA token revoked". */
  label: string;
  /** What the owner can do about it; null when nothing is needed. */
  action: string | null;
  /**
   * The upstream answer that set the state, as it happened (docs/proxy.md#upstream-errors-that-change-a-state); null
   * when none did (set by hand, or usable).
   */
  cause: Cause | null;
}

/** The upstream error behind a state: code, message, when, and the proxied call that got it (null: a sync). */
export interface Cause {
  code: number;
  message: string;
  at: number;
  requestId: string | null;
  /** Whose state it set. */
  of: "waba" | "number";
}

export function causeOf(entity: StatusCause, of: Cause["of"]): Cause | null {
  if (entity.causeCode === null || entity.causeAt === null) return null;
  return {
    code: entity.causeCode,
    message: entity.causeMessage ?? "",
    at: entity.causeAt,
    requestId: entity.causeRequestId,
    of,
  };
}

/** A cause in words, e.g. `The platform answered error 190 ("…") to request req_… at 2026-11-24 23:10:05 UTC.` */
export function causeText(cause: Cause): string {
  const when = new Date(cause.at)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
  const what = `error ${cause.code}${cause.message ? ` ("${cause.message}")` : ""}`;
  const how = cause.requestId ? `to the proxied call ${cause.requestId}` : "when the number was checked";
  return `The platform answered ${what} ${how} at ${when}.`;
}

/** `signup`: Embedded Signup is on, so a customer can reconnect a number of the service's app themselves. */
export function numberCondition(
  number: PhoneNumber,
  waba: Waba | undefined,
  { signup = false }: { signup?: boolean } = {},
): NumberCondition {
  const condition = conditionOf(number, waba, signup && waba?.appSecret === null);
  const cause = condition.usable
    ? null
    : waba?.status === "token_revoked"
      ? causeOf(waba, "waba")
      : waba?.status === "connected"
        ? causeOf(number, "number")
        : null;
  return { ...condition, label: NUMBER_STATES[condition.state], cause };
}

const SIGN_UP_AGAIN = "Connect with the platform again for this number (Numbers page): it";

function conditionOf(
  number: PhoneNumber,
  waba: Waba | undefined,
  signup: boolean,
): Omit<NumberCondition, "label" | "cause"> {
  if (!waba || waba.status === "disconnected") {
    return {
      usable: false,
      state: "waba_disconnected",
      action: "Connect the WABA again (Connect a number, with the same WABA id) or ask your operator.",
    };
  }
  if (waba.status === "token_revoked") {
    return {
      usable: false,
      state: "token_revoked",
      action:
        waba.appSecret !== null
          ? "The WABA's access token was revoked or expired: connect the number again with a new access token for this WABA, then Check again."
          : signup
            ? `The WABA's access token was revoked or expired: ${SIGN_UP_AGAIN} gives a new token. Or ask your operator for one, then Check again.`
            : "The WABA's access token was revoked or expired: ask your operator to give a new one, then Check again.",
    };
  }
  switch (number.status) {
    case "connected":
      return { usable: true, state: "connected", action: null };
    case "disconnected":
      return { usable: false, state: "disconnected", action: "Connect the number again, or ask your operator." };
    case "restricted":
      return {
        usable: false,
        state: "restricted",
        action:
          "The platform locked this business account or number (error 131031). Resolve it in the platform's business settings, then Check again.",
      };
    case "flagged":
      return {
        usable: false,
        state: "flagged",
        action:
          "The platform blocked this number for a while for a policy violation (error 368). Wait for the block to end, then Check again.",
      };
    case "not_registered":
      return {
        usable: false,
        state: "not_registered",
        action:
          signup && number.kind === "embedded"
            ? `The number is not registered with the platform's cloud API (error 133010). ${SIGN_UP_AGAIN} registers it with your PIN.`
            : "The number is not registered with the platform's cloud API (error 133010). Register it, then Check again.",
      };
  }
}

/** Requests per second of a number's own bucket (docs/proxy.md#rate-limits), as the proxy applies it. */
export const numberRateLimit = (number: Pick<PhoneNumber, "kind" | "throughputLevel">): number =>
  numberLimit(number).capacity;

/** Requests per hour of a WABA's bucket (docs/proxy.md#rate-limits). */
export const WABA_RATE_LIMIT_PER_HOUR = LIMITS.waba.capacity;

export const KIND_NAMES: Record<NumberKind, string> = {
  sandbox: "Sandbox",
  byo: "Bring your own",
  embedded: "Embedded signup",
  coexistence: "Coexistence",
};
