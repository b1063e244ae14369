import { t } from "elysia";
import { MAX_URL_LENGTH } from "../net/url-rules.ts";
import { MAX_PAGE, MAX_STATS_HOURS } from "./deliveries.ts";

/**
 * Request shapes of the webhook API (CONTRACT 4). Field names are checked against SPEC 6.2 by the
 * operations (so the answer is 422 `invalid_fields`, not a generic validation error).
 */
// Longer URLs pass the schema so that the URL rules answer with 422 invalid_url and a reason.
const url = t.String({ minLength: 1, maxLength: 4 * MAX_URL_LENGTH, description: "https URL, at most 2048 characters, no credentials" });
const fields = t.Array(t.String({ maxLength: 100 }), { maxItems: 100, description: "1 to 40 names from GET /api/webhooks/fields" });
const phoneNumberId = t.Union([t.String({ minLength: 1, maxLength: 64 }), t.Null()], {
  description: "deliver only changes for this number; null = every number",
});

export const createEndpointBody = t.Object({ url, fields, phone_number_id: t.Optional(phoneNumberId) }, { additionalProperties: false });
export const updateEndpointBody = t.Object({
  url: t.Optional(url),
  fields: t.Optional(fields),
  phone_number_id: t.Optional(phoneNumberId),
}, { additionalProperties: false });

export const deliveryQuery = t.Object({
  endpoint_id: t.Optional(t.String({ maxLength: 64 })),
  status: t.Optional(t.Union([t.Literal("pending"), t.Literal("succeeded"), t.Literal("parked")])),
  cursor: t.Optional(t.String({ maxLength: 200 })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_PAGE })),
});

export const statsQuery = t.Object({ hours: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_STATS_HOURS })) });

export const settingsBody = t.Object({ retention: t.Union([t.Literal("24h"), t.Literal("7d")]) }, { additionalProperties: false });
