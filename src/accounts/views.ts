import { iso } from "../http/iso-time.ts";
import type { Account, ApiKey, User } from "../store/types.ts";

/** The JSON shapes of accounts, keys and users in the operator and dashboard APIs (snake_case, never a secret). */

export const accountView = (a: Account) => ({
  id: a.id,
  name: a.name,
  email: a.email,
  billing_status: a.billingStatus,
  retention: a.retention,
  max_numbers: a.maxNumbers,
  created_at: iso(a.createdAt),
});

export const apiKeyView = (k: ApiKey) => ({
  id: k.id,
  account_id: k.accountId,
  mode: k.mode,
  name: k.name,
  prefix: k.prefix,
  created_at: iso(k.createdAt),
  revoked_at: iso(k.revokedAt),
});

export const userView = (u: Pick<User, "id" | "accountId" | "email" | "createdAt" | "lastSignInAt">) => ({
  id: u.id,
  account_id: u.accountId,
  email: u.email,
  created_at: iso(u.createdAt),
  last_sign_in_at: iso(u.lastSignInAt),
});
