import { t } from "elysia";
import { literals } from "../http/literals.ts";
import { NUMBER_KINDS, NUMBER_STATUSES, WABA_STATUSES } from "../store/vocabulary.ts";

/**
 * Request bodies of the operator API on WABAs and numbers (docs/operations.md#provisioning); the CLI validates its
 * flags against the same schemas.
 */

const id = (description: string) => t.String({ minLength: 1, maxLength: 64, pattern: "^[0-9A-Za-z_-]+$", description });

export const createWabaBody = t.Object(
  {
    waba_id: id("the upstream WABA id"),
    access_token: t.String({ minLength: 1, maxLength: 4096 }),
    app_secret: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

export const updateWabaBody = t.Object(
  {
    status: t.Optional(literals(WABA_STATUSES)),
    access_token: t.Optional(t.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
);

export const createNumberBody = t.Object(
  {
    phone_number_id: id("the upstream phone number id"),
    waba_id: id("the WABA the number belongs to"),
    kind: literals(NUMBER_KINDS),
  },
  { additionalProperties: false },
);

export const updateNumberBody = t.Object(
  {
    status: t.Optional(literals(NUMBER_STATUSES)),
  },
  { additionalProperties: false },
);

export type CreateWabaInput = typeof createWabaBody.static;
export type UpdateWabaInput = typeof updateWabaBody.static;
export type CreateNumberInput = typeof createNumberBody.static;
export type UpdateNumberInput = typeof updateNumberBody.static;
