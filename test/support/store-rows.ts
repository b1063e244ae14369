import type { Onboarding } from "../../src/store/onboardings.ts";
import type { RequestRecord, UsageCount } from "../../src/store/requests.ts";

// Rows the request log and onboarding stores take, for tests that write to them directly.

/** A request log record of a forwarded send at a number, for tests that write to the log directly. */
export function requestRecord(
  id: string,
  accountId: string,
  at: number,
  extra: Partial<RequestRecord> = {},
): RequestRecord {
  return {
    id,
    accountId,
    at,
    apiKeyId: "key_1",
    method: "POST",
    route: "POST /{version}/{phone_number_id}/messages",
    phoneNumberId: "2001",
    wabaId: "1001",
    status: 200,
    errorCode: null,
    upstreamStatus: 200,
    upstreamErrorCode: null,
    upstreamErrorSubcode: null,
    upstreamMs: 1.25,
    requestBytes: 90,
    responseBytes: 150,
    messageId: null,
    ...extra,
  };
}

let counted = 0;

/**
 * Request log records that add up to these usage counts (usageOf's inverse): `count` records per
 * count, at its hour, on its number, answered as its kind and label say.
 */
export function recordsCounting(counts: UsageCount[]): RequestRecord[] {
  return counts.flatMap((u) =>
    Array.from({ length: u.count }, () =>
      requestRecord(`req_usage_${++counted}`, u.accountId, u.hour, {
        phoneNumberId: u.targetId,
        wabaId: null,
        route: u.kind === "forwarded" ? u.label : null,
        status: u.kind === "forwarded" ? 200 : 400,
        errorCode: u.kind === "refused" ? Number(u.label) : null,
        upstreamStatus: u.kind === "refused" ? null : u.kind === "forwarded" ? 200 : 400,
        upstreamErrorCode: u.kind === "upstream_error" ? Number(u.label) : null,
      }),
    ),
  );
}

/** An Embedded Signup onboarding of `acc_suite` started at `at`, unfinished, with its sealed secrets; expires an hour later. */
export function onboardingRow(at: number, overrides: Partial<Onboarding> = {}): Onboarding {
  return {
    id: "sgn_1",
    accountId: "acc_suite",
    phoneNumberId: "pn_1",
    wabaId: "waba_1",
    kind: "embedded",
    code: "AQ-code",
    codeHash: "hash-1",
    accessToken: null,
    pin: "123456",
    steps: {},
    preflights: {},
    syncs: {},
    finishedAt: null,
    leaseUntil: null,
    expiresAt: at + 3_600_000,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}
