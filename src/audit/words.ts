import type { Actor, AuditAction } from "../store/audit.ts";

/** Each action in words, for the Activity page (and the operator's): every action has its own. */
export const ACTION_WORDS: Record<AuditAction, string> = {
  "account.create": "Created the account",
  "account.update": "Changed the account",
  "settings.update": "Changed the settings",
  "user.create": "Added a dashboard user",
  "user.reset_password": "Reset a dashboard user's password",
  "user.change_password": "Changed their own password",
  "user.delete": "Removed a dashboard user",
  "session.create": "Signed in",
  "session.failed": "Failed to sign in",
  "session.delete": "Signed out",
  "api_key.create": "Created an API key",
  "api_key.revoke": "Revoked an API key",
  "waba.create": "Connected a WABA",
  "waba.update": "Changed a WABA",
  "number.create": "Connected a number",
  "number.update": "Changed a number",
  "number.sync": "Checked a number again",
  "endpoint.create": "Added an endpoint",
  "endpoint.update": "Changed an endpoint",
  "endpoint.enable": "Enabled an endpoint",
  "endpoint.disable": "Disabled an endpoint",
  "endpoint.delete": "Deleted an endpoint",
  "endpoint.rotate_secret": "Rotated an endpoint's signing secret",
  "endpoint.recover": "Started a bulk recover",
  "delivery.replay": "Replayed a delivery",
  "signup.start": "Started an Embedded Signup",
  "signup.retry": "Retried an Embedded Signup",
  "onboarding.delete": "Deleted a signup record",
  "coexistence.preflight": "Ran a sync's pre-flight",
  "coexistence.sync": "Started a coexistence sync",
  "backup.create": "Took a backup",
  "backup.download": "Downloaded a backup",
  "operator.create": "Added an operator",
  "operator.delete": "Deleted an operator",
  "operator.reset_password": "Reset an operator's password",
  "audit.capped": "Counted the account's further changes this hour without recording each",
};

/** Who, in words: the user's email, or what the operator's side or the service is. */
export function actorWords(actor: Pick<Actor, "kind"> & { id?: string; email?: string | null }): string {
  switch (actor.kind) {
    case "user":
      return actor.email ?? (actor.id === "unknown" || actor.id === undefined ? "An unknown email" : actor.id);
    case "operator":
      return actor.email ? `Operator ${actor.email}` : "Operator";
    case "operator_token":
      return actor.id === "cli" ? "Operator (command line)" : "Operator (API token)";
    case "system":
      return actor.id === "webhook_relay" ? "Switchboard (automatic)" : `Switchboard (${actor.id})`;
  }
}
