import { iso } from "../http/iso-time.ts";
import type { Account, ApiKey, PhoneNumber, User, Waba } from "../store/types.ts";

/** The JSON shapes the operator and dashboard APIs answer with (snake_case, never a secret). */

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

export const wabaView = (w: Waba) => ({
  waba_id: w.wabaId,
  account_id: w.accountId,
  status: w.status,
  byo_app: w.appSecret !== null,
  created_at: iso(w.createdAt),
  updated_at: iso(w.updatedAt),
});

export const numberView = (n: PhoneNumber) => ({
  phone_number_id: n.phoneNumberId,
  account_id: n.accountId,
  waba_id: n.wabaId,
  kind: n.kind,
  status: n.status,
  throughput_level: n.throughputLevel,
  display_phone_number: n.displayPhoneNumber,
  verified_name: n.verifiedName,
  synced_at: iso(n.syncedAt),
  sync_error: n.syncError,
  created_at: iso(n.createdAt),
});

export const userView = (u: User) => ({
  id: u.id,
  account_id: u.accountId,
  email: u.email,
  created_at: iso(u.createdAt),
});
