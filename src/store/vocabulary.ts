/**
 * Every list of states, kinds and reasons the service stores, declared once. The types (types.ts
 * and the seam's interfaces), both schemas' column enums and the API's TypeBox unions derive from
 * these, so a new value is added in one place.
 */

export const BILLING_STATUSES = ["active", "none", "overdue", "suspended"] as const;
export const RETENTIONS = ["24h", "7d"] as const;
export const KEY_MODES = ["live", "test"] as const;
export const WABA_STATUSES = ["connected", "disconnected", "token_revoked"] as const;
export const NUMBER_KINDS = ["sandbox", "byo", "embedded", "coexistence"] as const;
export const NUMBER_STATUSES = ["connected", "disconnected", "restricted", "flagged", "not_registered"] as const;
export const THROUGHPUT_LEVELS = ["STANDARD", "HIGH"] as const;
/** Why an endpoint was disabled: 50 failures with no success in 24 hours, or a 410. */
export const DISABLED_REASONS = ["consecutive_failures", "gone"] as const;
/**
 * How an endpoint's deliveries are signed and shaped (docs/webhooks.md#signature-schemes): Standard
 * Webhooks headers over the account's share of an event, or also the platform's own
 * X-Hub-Signature-256 over one change per delivery, as bots written against the platform expect.
 */
export const SIGNATURE_SCHEMES = ["standard", "platform"] as const;
export const DELIVERY_STATUSES = ["pending", "succeeded", "parked"] as const;
export const PARKED_REASONS = ["attempts_exhausted", "gone", "endpoint_disabled", "payload_missing"] as const;
/** What a message id's event is: a status of a sent message, or a message received. */
export const MESSAGE_EVENT_KINDS = ["status", "inbound"] as const;
/** How a usage count's calls ended: forwarded by row, upstream's error by code, our refusal by code. */
export const USAGE_KINDS = ["forwarded", "upstream_error", "refused"] as const;
export const RECOVERY_STATUSES = ["running", "done"] as const;
/** The kinds of number Embedded Signup onboards. */
export const ONBOARDING_KINDS = ["embedded", "coexistence"] as const satisfies readonly (typeof NUMBER_KINDS)[number][];
/**
 * Who makes a change the audit log records (src/store/audit.ts): an operator user (the console),
 * the operator API's token or the CLI, an account's user, the service itself.
 */
export const ACTOR_KINDS = ["operator", "operator_token", "user", "system"] as const;
/** Every change the audit log records, as `object.verb` (their words: src/audit/words.ts). */
export const AUDIT_ACTIONS = [
  "account.create",
  "account.update",
  "settings.update",
  "user.create",
  "user.reset_password",
  "user.change_password",
  "user.delete",
  "session.create",
  "session.failed",
  "session.delete",
  "api_key.create",
  "api_key.revoke",
  "waba.create",
  "waba.update",
  "number.create",
  "number.update",
  "number.sync",
  "endpoint.create",
  "endpoint.update",
  "endpoint.enable",
  "endpoint.disable",
  "endpoint.delete",
  "endpoint.rotate_secret",
  "endpoint.recover",
  "delivery.replay",
  "signup.start",
  "signup.retry",
  "onboarding.delete",
  "coexistence.preflight",
  "coexistence.sync",
  "backup.create",
  "backup.download",
  "operator.create",
  "operator.delete",
  "operator.reset_password",
  "audit.capped",
] as const;
