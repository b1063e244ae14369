import { literals } from "../http/literals.ts";
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { BILLING_STATUSES, KEY_MODES, RETENTIONS } from "../store/vocabulary.ts";
import { MAX_INTEGER_COLUMN } from "../http/whole-number.ts";

/**
 * Request bodies of the operator API on accounts, users and keys (docs/operations.md#provisioning); the CLI validates
 * its flags against the same schemas.
 */

const billingStatus = literals(BILLING_STATUSES);
const retention = literals(RETENTIONS);
// TypeBox's own integer, not Elysia's t.Integer: that one also takes a numeric string, and its
// coercion walks a body that is a JSON string character by character (6 s for 1 MB).
const maxNumbers = t.Union([Type.Integer({ minimum: 0, maximum: MAX_INTEGER_COLUMN }), t.Null()]);

export const createAccountBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    email: t.String({ format: "email", maxLength: 320 }),
    billing_status: t.Optional(billingStatus),
    retention: t.Optional(retention),
    max_numbers: t.Optional(maxNumbers),
  },
  { additionalProperties: false },
);

export const updateAccountBody = t.Partial(createAccountBody, { additionalProperties: false });

export const createUserBody = t.Object(
  {
    email: t.String({ format: "email", maxLength: 320 }),
    password: t.String({ minLength: 10, maxLength: 200 }),
  },
  { additionalProperties: false },
);

export const createApiKeyBody = t.Object(
  {
    mode: literals(KEY_MODES),
    name: t.Optional(t.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export type CreateAccountInput = typeof createAccountBody.static;
export type UpdateAccountInput = typeof updateAccountBody.static;
export type CreateUserInput = typeof createUserBody.static;
export type CreateApiKeyInput = typeof createApiKeyBody.static;

/** PATCH /api/settings: the account's own settings, as its users may change them. */
export const settingsBody = t.Object({ retention }, { additionalProperties: false });
