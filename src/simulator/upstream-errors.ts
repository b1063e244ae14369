import { NEUTRAL_WORD } from "../platform/names.ts";

/**
 * The upstream platform's own error answers, as the simulator gives them. Status and wording follow
 * what the platform sends; only the codes matter to Switchboard (docs/proxy.md#upstream-errors-that-change-a-state).
 */
export const UPSTREAM_ERRORS = {
  190: {
    status: 401,
    type: "OAuthException",
    subcode: 463,
    message: "Error validating access token: Session has expired or the token was invalidated.",
  },
  131031: { status: 400, type: "OAuthException", subcode: undefined, message: "Business account has been locked." },
  133010: { status: 400, type: "OAuthException", subcode: undefined, message: "Account not registered." },
  368: {
    status: 400,
    type: "OAuthException",
    subcode: 1390008,
    message: "Temporarily blocked for policies violations.",
  },
  130429: {
    status: 400,
    type: "OAuthException",
    subcode: undefined,
    message: "Rate limit hit: throughput for this number has been reached.",
  },
  132001: {
    status: 404,
    type: "OAuthException",
    subcode: 2494073,
    message: "Template name does not exist in the translation",
  },
  100: {
    status: 400,
    type: "GraphMethodException",
    subcode: 33,
    message:
      "Unsupported request. The object does not exist, cannot be loaded due to missing permissions, or does not support this operation.",
  },
} as const;

export type UpstreamErrorCode = keyof typeof UPSTREAM_ERRORS;

/** An error response in the upstream's shape, with its trace id in the body as upstream does. */
export function upstreamErrorBody(
  code: UpstreamErrorCode,
  traceId: string,
  message?: string,
  product = NEUTRAL_WORD,
): { status: number; body: unknown } {
  const spec = UPSTREAM_ERRORS[code];
  const error: Record<string, unknown> = { message: message ?? spec.message, type: spec.type, code };
  if (spec.subcode !== undefined) error.error_subcode = spec.subcode;
  if (code >= 130000) error.error_data = { messaging_product: product, details: spec.message };
  error.trace_id = traceId;
  return { status: spec.status, body: { error } };
}
