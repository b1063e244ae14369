/**
 * Every error the service raises itself. Proxy errors (docs/errors.md#proxy-errors) carry numeric codes that are
 * never renumbered; the operator and dashboard APIs (docs/operations.md#provisioning,
 * docs/operations.md#the-dashboard-and-its-api) use string codes.
 */
export const ERRORS = {
  // docs/errors.md#proxy-errors
  invalid_api_key: { status: 401, type: "ProxyAuthException", code: 1001, message: "Invalid or missing API key." },
  test_key_on_live_number: {
    status: 401,
    type: "ProxyAuthException",
    code: 1001,
    message: "Test keys only work with sandbox numbers.",
  },
  no_subscription: {
    status: 402,
    type: "ProxyBillingException",
    code: 1002,
    message: "This account has no active subscription.",
  },
  payment_overdue: {
    status: 402,
    type: "ProxyBillingException",
    code: 1002,
    message: "Subscription payment is overdue.",
  },
  account_suspended: { status: 402, type: "ProxyBillingException", code: 1002, message: "This account is suspended." },
  unknown_route: { status: 404, type: "ProxyRoutingException", code: 1003, message: "Unknown route or object." },
  payload_too_large: {
    status: 413,
    type: "ProxyPayloadTooLargeException",
    code: 1004,
    message: "Request body exceeds 100 MB.",
  },
  waba_token_revoked: { status: 422, type: "ProxyNotConnectedException", code: 1005, message: "WABA token revoked." },
  waba_disconnected: { status: 422, type: "ProxyNotConnectedException", code: 1005, message: "WABA disconnected." },
  number_disconnected: { status: 422, type: "ProxyNotConnectedException", code: 1005, message: "Number disconnected." },
  number_restricted: { status: 422, type: "ProxyNotConnectedException", code: 1005, message: "Number restricted." },
  number_flagged: { status: 422, type: "ProxyNotConnectedException", code: 1005, message: "Number flagged." },
  number_not_registered: {
    status: 422,
    type: "ProxyNotConnectedException",
    code: 1005,
    message: "Number not registered.",
  },
  rate_limited: {
    status: 429,
    type: "ProxyThrottleException",
    code: 1006,
    message: "Rate limit reached for this number.",
  },
  upstream_unreachable: {
    status: 502,
    type: "ProxyUpstreamException",
    code: 1007,
    message: "The upstream platform could not be reached.",
  },
  upstream_timeout: { status: 503, type: "ProxyUpstreamException", code: 1007, message: "Upstream request timed out." },

  // docs/operations.md#provisioning, docs/operations.md#the-dashboard-and-its-api
  unauthorized: {
    status: 401,
    type: "AuthException",
    code: "unauthorized",
    message: "Missing or invalid credentials.",
  },
  forbidden: {
    status: 403,
    type: "AuthException",
    code: "forbidden",
    message: "This request is not allowed from this origin.",
  },
  not_found: { status: 404, type: "NotFoundException", code: "not_found", message: "Not found." },
  invalid_request: {
    status: 400,
    type: "InvalidRequestException",
    code: "invalid_request",
    message: "The request is not valid.",
  },
  conflict: {
    status: 409,
    type: "ConflictException",
    code: "conflict",
    message: "This conflicts with an existing record.",
  },
  plan_limit: {
    status: 409,
    type: "ConflictException",
    code: "plan_limit",
    message: "The account's plan allows no more numbers.",
  },
  preflight_required: {
    status: 409,
    type: "ConflictException",
    code: "preflight_required",
    message:
      "No endpoint has passed the pre-flight check for this sync; run it first, or start the sync with override.",
  },
  too_many_signups: {
    status: 409,
    type: "ConflictException",
    code: "too_many_signups",
    message: "This account has too many unfinished signups.",
  },
  number_not_readable: {
    status: 403,
    type: "PermissionException",
    code: "number_not_readable",
    message: "The business that signed up cannot read this number.",
  },
  sync_unavailable: {
    status: 409,
    type: "ConflictException",
    code: "sync_unavailable",
    message: "The platform no longer allows this sync for this number.",
  },
  no_numbers: {
    status: 409,
    type: "ConflictException",
    code: "no_numbers",
    message: "Connect a live number before adding a webhook endpoint.",
  },
  invalid_url: {
    status: 422,
    type: "InvalidRequestException",
    code: "invalid_url",
    message: "The URL is not allowed.",
  },
  invalid_fields: {
    status: 422,
    type: "InvalidRequestException",
    code: "invalid_fields",
    message: "Choose 1 to 40 known event fields.",
  },
  invalid_credentials: {
    status: 422,
    type: "InvalidRequestException",
    code: "invalid_credentials",
    message: "The upstream platform did not accept these credentials.",
  },
  invalid_signature: {
    status: 401,
    type: "AuthException",
    code: "invalid_signature",
    message: "X-Hub-Signature-256 is missing or does not match.",
  },
  verify_token_mismatch: {
    status: 403,
    type: "AuthException",
    code: "verify_token_mismatch",
    message: "The verify token does not match.",
  },
  invalid_event: {
    status: 400,
    type: "InvalidRequestException",
    code: "invalid_event",
    message: "The body is not a webhook event ({object, entry[{id, changes[{field, value}]}]}).",
  },
  // The rest of such a body is never read: the connection is closed rather than left half-read.
  body_too_large: {
    status: 413,
    type: "InvalidRequestException",
    code: "body_too_large",
    message: "The request body exceeds 1 MB.",
    closes: true,
  },
  length_required: {
    status: 411,
    type: "InvalidRequestException",
    code: "length_required",
    message: "Send the body with a Content-Length (at most 1 MB).",
    closes: true,
  },
  event_too_large: {
    status: 413,
    type: "InvalidRequestException",
    code: "event_too_large",
    message: "The webhook event exceeds 10 MB.",
    closes: true,
  },
  // Bun gives a GET or HEAD no body to read, and would keep its connection open while one trickles in.
  body_not_expected: {
    status: 400,
    type: "InvalidRequestException",
    code: "invalid_request",
    message: "A GET or HEAD request carries no body; send it without one.",
    closes: true,
  },
  body_timeout: {
    status: 408,
    type: "InvalidRequestException",
    code: "body_timeout",
    message: "The request body did not arrive in time.",
    closes: true,
  },
  unsupported_media_type: {
    status: 415,
    type: "InvalidRequestException",
    code: "unsupported_media_type",
    message: "Send the body as JSON, with Content-Type: application/json.",
  },
  payload_expired: {
    status: 410,
    type: "GoneException",
    code: "payload_expired",
    message: "The payload of this delivery has been deleted.",
  },
  signup_rate_limited: {
    status: 429,
    type: "ThrottleException",
    code: "signup_rate_limited",
    message: "This account started too many signups; try again later.",
  },
  too_many_attempts: {
    status: 429,
    type: "AuthException",
    code: "too_many_attempts",
    message: "Too many failed sign-ins; try again later.",
  },
  backup_running: {
    status: 409,
    type: "ConflictException",
    code: "backup_running",
    message: "A backup is being taken; try again when it is done.",
  },
  backup_unsupported: {
    status: 409,
    type: "ConflictException",
    code: "backup_unsupported",
    message:
      "Backups are taken of the SQLite database; back up PostgreSQL with its own tools (pg_dump, point-in-time recovery).",
  },
  backup_location_refused: {
    status: 409,
    type: "ConflictException",
    code: "backup_location_refused",
    message: "BACKUP_TO is a symbolic link, which backups never follow: name the directory it points to.",
  },
  backup_failed: {
    status: 500,
    type: "InternalException",
    code: "backup_failed",
    message: "The backup failed; nothing was kept.",
  },
  internal: { status: 500, type: "InternalException", code: "internal", message: "Internal error." },
  unavailable: {
    status: 503,
    type: "UnavailableException",
    code: "unavailable",
    message: "The database is unavailable; nothing was stored. Try again shortly.",
  },
} as const;

export type ErrorName = keyof typeof ERRORS;
export type ErrorSpec = (typeof ERRORS)[ErrorName];

/** An error of ours, as a value: which one, and optionally a more specific message and headers (Retry-After). */
export class AppError extends Error {
  readonly spec: ErrorSpec;
  constructor(
    readonly errorName: ErrorName,
    message?: string,
    readonly headers?: Record<string, string>,
  ) {
    const spec = ERRORS[errorName];
    super(message ?? spec.message);
    this.spec = spec;
  }
  get status(): number {
    return this.spec.status;
  }
}

export interface ErrorEnvelope {
  error: { message: string; type: string; code: number | string; trace_id: string };
}

/** The one place the envelope of docs/errors.md#the-envelope is written. */
export function errorEnvelope(name: ErrorName, traceId: string, message?: string): ErrorEnvelope {
  const spec = ERRORS[name];
  return { error: { message: message ?? spec.message, type: spec.type, code: spec.code, trace_id: traceId } };
}

export function errorResponse(
  name: ErrorName,
  traceId: string,
  options: { message?: string; headers?: Record<string, string> } = {},
): Response {
  const body = JSON.stringify(errorEnvelope(name, traceId, options.message));
  const spec: ErrorSpec = ERRORS[name];
  // The length Bun would send anyway, set here so that the request log can read it.
  return new Response(body, {
    status: spec.status,
    headers: {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "x-proxy-request-id": traceId,
      ...("closes" in spec ? { connection: "close" } : {}),
      ...options.headers,
    },
  });
}
