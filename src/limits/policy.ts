import type { PhoneNumber } from "../store/types.ts";
import type { BucketSpec } from "./token-bucket.ts";

/** The bucket table (docs/proxy.md#rate-limits). The service plan plays no part. */
export const LIMITS = {
  numberStandard: { capacity: 80, windowMs: 1000 },
  numberHigh: { capacity: 1000, windowMs: 1000 },
  numberCoexistence: { capacity: 20, windowMs: 1000 },
  waba: { capacity: 5000, windowMs: 3_600_000 },
} as const;

/** A number's limit: coexistence caps it whatever its tier; otherwise its synced throughput level decides. */
export function numberLimit(number: Pick<PhoneNumber, "kind" | "throughputLevel">) {
  return number.kind === "coexistence"
    ? LIMITS.numberCoexistence
    : number.throughputLevel === "HIGH"
      ? LIMITS.numberHigh
      : LIMITS.numberStandard;
}

/** A number's bucket; its capacity follows the number's current kind and synced throughput level. */
export function numberBucket(number: Pick<PhoneNumber, "phoneNumberId" | "kind" | "throughputLevel">): BucketSpec {
  return { key: `number:${number.phoneNumberId}`, ...numberLimit(number) };
}

export function wabaBucket(wabaId: string): BucketSpec {
  return { key: `waba:${wabaId}`, ...LIMITS.waba };
}

/**
 * An account's Embedded Signup runs, starts and retries alike (issue 26): each may exchange a code
 * in the service app's name. Not a proxied call's limit: EMBEDDED_SIGNUP_STARTS_PER_HOUR sets it.
 */
export function signupBucket(accountId: string, perHour: number): BucketSpec {
  return { key: `signup:${accountId}`, capacity: perHour, windowMs: 3_600_000 };
}
