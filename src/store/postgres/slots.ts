// The leases of the queue on PostgreSQL live in endpoint_slots (see schema.ts); what the
// statements that free them share.

/** Channel of "deliveries are claimable": every instance's dispatcher wakes and claims. */
export const WORK_CHANNEL = "switchboard_work";

/** Frees a slot: its delivery is claimable again, and a completion under its lease records nothing. */
export const SLOT_RELEASE = "delivery_id = NULL, lease_id = NULL, holder = NULL, lease_until = NULL";

/** A SELECT (for a CTE) that tells every instance of new work, once, when the CTE `rows` has any row. */
const notifyWork = (rows: string) =>
  `SELECT pg_notify('${WORK_CHANNEL}', '') FROM (SELECT 1 FROM ${rows} LIMIT 1) AS any_row`;

/**
 * The CTEs that follow taking leases back, given the CTE `freed` of the slots freed (returning
 * their endpoint_id): the next claim of those endpoints reads their due deliveries from the start
 * (the ones freed are behind where claims read from, see endpoint_due), and every instance is told
 * (`told`, to be counted by the statement so that it runs).
 */
export const afterTakingBack = (freed: string) => `rescan AS (
    UPDATE endpoint_due SET scanned_at = NULL WHERE endpoint_id IN (SELECT endpoint_id FROM ${freed})
  ), told AS (${notifyWork(freed)})`;
