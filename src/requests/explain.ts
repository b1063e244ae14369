/**
 * What a logged call's error means and what to do, in words, for the Requests page's detail
 * (issue 19): our own codes (docs/errors.md#proxy-errors) and the upstream codes callers meet most. A code not listed
 * is shown with the platform's own message only.
 */
const OURS: Record<number, string> = {
  1001: "Switchboard did not accept the API key: it is unknown or revoked, or a test key was used on a live number (test keys work only with sandbox numbers). Use a live key of this account.",
  1002: "The account's subscription is missing, overdue or suspended, so Switchboard forwards nothing. Settle it with your operator.",
  1003: "The path, method or id is not one Switchboard forwards, or the number, WABA or media id does not belong to this account.",
  1004: "The request body is over 100 MB. Send media of at most 100 MB.",
  1005: "The number or its WABA is not connected (revoked token, restricted, flagged, not registered or disconnected). The Numbers page says why and what to do.",
  1006: "The number's (or WABA's) rate limit was reached. Wait as long as Retry-After says, and spread sends over time or numbers.",
  1007: "The platform could not be reached or did not answer in time. The call was not retried; send it again.",
};

const UPSTREAM: Record<number, string> = {
  100: "The platform refused a parameter of the request: check the body against the platform's API reference.",
  190: "The platform no longer accepts the WABA's access token (revoked or expired). Connect the WABA again with a new token.",
  368: "The platform blocked the number for a while for a policy violation. Wait for the block to end.",
  130429: "The platform's own throughput limit for this number was reached. Slow down.",
  131026: "The message could not be delivered to this recipient (not on the platform, or an old app).",
  131047: "More than 24 hours have passed since the customer last wrote: only a template message can be sent now.",
  131031: "The platform locked this business account or number. Resolve it in the platform's business settings.",
  131056: "Too many messages to this same recipient in a short time. Wait before sending to them again.",
  132001: "The template does not exist in this language (or is not approved) on this WABA.",
  133010: "The number is not registered with the platform's cloud API. Register it first.",
};

/** The words for a logged call's error, or null when it had none we can explain. */
export function explainCall(record: { errorCode: number | null; upstreamErrorCode: number | null }): string | null {
  if (record.errorCode !== null) return OURS[record.errorCode] ?? null;
  if (record.upstreamErrorCode !== null) return UPSTREAM[record.upstreamErrorCode] ?? null;
  return null;
}
