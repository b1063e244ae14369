import { t, type TSchema } from "elysia";
import { resetPasswordBody } from "../accounts/logins.ts";
import { createAccountBody, createUserBody } from "../accounts/schemas.ts";

/**
 * The console's forms, each read (html/form.ts) against the operator API's own schemas, so a
 * form and its API call accept exactly the same input.
 */

/** A new account and its first dashboard login, in one form. */
export const createAccountForm = t.Object(
  {
    name: createAccountBody.properties.name,
    email: createAccountBody.properties.email,
    billing_status: createAccountBody.properties.billing_status,
    retention: createAccountBody.properties.retention,
    user_email: createUserBody.properties.email,
    user_password: createUserBody.properties.password,
  },
  { additionalProperties: false },
);
export type CreateAccountForm = typeof createAccountForm.static;

export const billingForm = t.Object(
  { billing_status: t.Required(createAccountBody.properties.billing_status) },
  { additionalProperties: false },
);

export const addUserForm = createUserBody;

/** A login's new password, as POST /admin/users/{id}/password takes it. */
export const resetPasswordForm = resetPasswordBody;

/** Check again: which page to come back to. */
export const checkForm = t.Object(
  { back: t.Optional(t.Union([t.Literal("account"), t.Literal("numbers")])) },
  { additionalProperties: false },
);

/** Each form route of the console and the schema its body is read against (the isolation suites read it too). */
export const CONSOLE_FORMS: Record<string, TSchema> = {
  "POST /operator/accounts": createAccountForm,
  "POST /operator/accounts/:account_id/billing": billingForm,
  "POST /operator/accounts/:account_id/users": addUserForm,
  "POST /operator/accounts/:account_id/users/:user_id/password": resetPasswordForm,
  "POST /operator/accounts/:account_id/numbers/:phone_number_id/check": checkForm,
};
