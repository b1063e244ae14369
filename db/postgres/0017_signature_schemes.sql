ALTER TABLE "deliveries" ADD COLUMN "signature" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "endpoints" ADD COLUMN "signature" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "endpoints" ADD COLUMN "verify_token_enc" text;--> statement-breakpoint
-- Each delivery stores the scheme it is signed with.
DROP FUNCTION switchboard_enqueue(text[], text[], bigint[], bytea[], text[], text[], boolean[], text[], text[], text[], text[], bigint[], text[], bigint[], text[], text[], text[], text[], text[], text[], integer[], bigint[]);
--> statement-breakpoint
CREATE FUNCTION switchboard_enqueue(
  e_ids text[], e_accounts text[], e_received bigint[], e_bodies bytea[], e_signatures text[], e_fields text[], e_tests boolean[],
  d_ids text[], d_accounts text[], d_endpoints text[], d_events text[], d_next bigint[], d_replays text[], d_created bigint[], d_signatures text[],
  m_events text[], m_accounts text[], m_messages text[], m_numbers text[], m_kinds text[], m_statuses text[], m_errors integer[], m_at bigint[])
RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  INSERT INTO events (id, account_id, received_at, body, upstream_signature, fields, is_test)
  SELECT e.id, e.account_id, e.received_at, e.body, e.signature, string_to_array(e.fields, ','), e.is_test
  FROM unnest(e_ids, e_accounts, e_received, e_bodies, e_signatures, e_fields, e_tests)
    AS e(id, account_id, received_at, body, signature, fields, is_test);
  INSERT INTO deliveries (id, account_id, endpoint_id, event_id, status, attempt_count, next_attempt_at, replay_of, signature, created_at, updated_at)
  SELECT d.id, d.account_id, d.endpoint_id, d.event_id, 'pending', 0, d.next, d.replay_of, d.signature, d.created_at, d.created_at
  FROM unnest(d_ids, d_accounts, d_endpoints, d_events, d_next, d_replays, d_created, d_signatures)
    AS d(id, account_id, endpoint_id, event_id, next, replay_of, created_at, signature);
  INSERT INTO event_messages (event_id, account_id, message_id, phone_number_id, kind, status, error_code, received_at)
  SELECT * FROM unnest(m_events, m_accounts, m_messages, m_numbers, m_kinds, m_statuses, m_errors, m_at);
  IF cardinality(d_ids) > 0 THEN
    PERFORM pg_notify('switchboard_work', '');
  END IF;
END
$$;
