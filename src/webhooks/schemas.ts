import { literals } from "../http/literals.ts";
import { t } from "elysia";
import { DELIVERY_STATUSES, SIGNATURE_SCHEMES } from "../store/vocabulary.ts";
import { wholeNumber } from "../http/whole-number.ts";
import { MAX_URL_LENGTH } from "../net/url-rules.ts";
import { MAX_PAGE, MAX_STATS_HOURS } from "./deliveries.ts";

/**
 * Request shapes of the webhook API (docs/operations.md#the-dashboard-and-its-api). Only the types are checked here:
 * any string is judged by the URL rules, and any list of strings against the names and count of
 * docs/webhooks.md#event-fields, so a bad value gets 422 `invalid_url` or `invalid_fields` with its reason, not a
 * generic 400.
 */
const url = t.String({ description: `https URL, at most ${MAX_URL_LENGTH} characters, no credentials` });
const fields = t.Array(t.String(), { description: "1 to 40 names from GET /api/webhooks/fields" });
const phoneNumberId = t.Union([t.String({ minLength: 1, maxLength: 64 }), t.Null()], {
  description: "deliver only changes for this number; null = every number",
});

// standard: Standard Webhooks headers; platform: also X-Hub-Signature-256, one change per delivery.
const signature = literals(SIGNATURE_SCHEMES);
const verifyToken = t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()], {
  description: "what Verify sends as hub.verify_token; null = none",
});

export const createEndpointBody = t.Object(
  {
    url,
    fields,
    phone_number_id: t.Optional(phoneNumberId),
    signature: t.Optional(signature),
    verify_token: t.Optional(verifyToken),
  },
  { additionalProperties: false },
);
export const updateEndpointBody = t.Object(
  {
    url: t.Optional(url),
    fields: t.Optional(fields),
    phone_number_id: t.Optional(phoneNumberId),
    signature: t.Optional(signature),
    verify_token: t.Optional(verifyToken),
  },
  { additionalProperties: false },
);

/** Send test's choice: any string, judged against docs/webhooks.md#event-fields (422 `invalid_fields`). */
/** Send test's body, which may be left out (see optionalBody). */
export const sendTestBody = t.Object(
  { field: t.Optional(t.String({ maxLength: 64, description: "the test event's field; default messages" })) },
  { additionalProperties: false },
);

// An empty endpoint_id or status (`?endpoint_id=&status=`, as a form or a script may send them) filters nothing.
export const deliveryQuery = t.Object({
  endpoint_id: t.Optional(t.String({ maxLength: 64 })),
  status: t.Optional(t.Union([literals(DELIVERY_STATUSES), t.Literal("")])),
  field: t.Optional(t.String({ maxLength: 64 })),
  number: t.Optional(t.String({ maxLength: 64 })),
  message_id: t.Optional(t.String({ maxLength: 300 })),
  from: t.Optional(t.String({ maxLength: 40 })),
  to: t.Optional(t.String({ maxLength: 40 })),
  last_status: t.Optional(t.Union([wholeNumber({ minimum: 100, maximum: 599 }), t.Literal("")])),
  cursor: t.Optional(t.String({ maxLength: 200 })),
  limit: t.Optional(wholeNumber({ minimum: 1, maximum: MAX_PAGE })),
});

export const statsQuery = t.Object({ hours: t.Optional(wholeNumber({ minimum: 1, maximum: MAX_STATS_HOURS })) });
