import { t } from "elysia";

/**
 * Request bodies of the operator API on WABAs and numbers (CONTRACT 3); the CLI validates its
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
    status: t.Optional(t.Union([t.Literal("connected"), t.Literal("disconnected"), t.Literal("token_revoked")])),
    access_token: t.Optional(t.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
);

export const createNumberBody = t.Object(
  {
    phone_number_id: id("the upstream phone number id"),
    waba_id: id("the WABA the number belongs to"),
    kind: t.Union([t.Literal("sandbox"), t.Literal("byo"), t.Literal("embedded"), t.Literal("coexistence")]),
  },
  { additionalProperties: false },
);

export const updateNumberBody = t.Object(
  {
    status: t.Optional(
      t.Union([
        t.Literal("connected"),
        t.Literal("disconnected"),
        t.Literal("restricted"),
        t.Literal("flagged"),
        t.Literal("not_registered"),
      ]),
    ),
  },
  { additionalProperties: false },
);

export type CreateWabaInput = typeof createWabaBody.static;
export type UpdateWabaInput = typeof updateWabaBody.static;
export type CreateNumberInput = typeof createNumberBody.static;
export type UpdateNumberInput = typeof updateNumberBody.static;
