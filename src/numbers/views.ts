import { iso } from "../http/iso-time.ts";
import type { PhoneNumber, Waba } from "../store/types.ts";

/** The JSON shapes of WABAs and numbers in the operator and dashboard APIs (snake_case, never a secret). */

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
