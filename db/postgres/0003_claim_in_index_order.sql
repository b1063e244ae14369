-- The claim reads an endpoint's due deliveries in the order of deliveries_due (endpoint, due time,
-- id: 0002) and takes only the few it leases before joining their events: joined first, every
-- claim read and sorted the endpoint's whole backlog with its events (bench/RESULTS.md).
CREATE OR REPLACE FUNCTION switchboard_claim(p_now bigint, p_lease_id text, p_lease_until bigint, p_limit integer, p_per_endpoint integer, p_max_bytes bigint)
RETURNS TABLE (
  id text, account_id text, endpoint_id text, event_id text, status text, attempt_count integer, next_attempt_at bigint,
  replay_of text, parked_reason text, created_at bigint, updated_at bigint, event_fields text[], is_test boolean,
  payload_available boolean, body bytea, upstream_signature text
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_endpoint text;
  v_room integer;
  v_ids text[] := '{}';
  v_bytes bigint := 0;
  v_due record;
BEGIN
  <<endpoints>>
  FOR v_endpoint IN
    SELECT e.id FROM endpoints e
    CROSS JOIN LATERAL (SELECT min(d.next_attempt_at) AS due FROM deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending') m
    WHERE m.due <= p_now
    ORDER BY m.due, e.id
  LOOP
    EXIT WHEN cardinality(v_ids) >= p_limit;
    CONTINUE WHEN NOT pg_try_advisory_xact_lock(1398030659, hashtext(v_endpoint));
    SELECT p_per_endpoint - count(*) INTO v_room FROM deliveries d
      WHERE d.endpoint_id = v_endpoint AND d.lease_until > p_now AND d.status = 'pending';
    v_room := least(v_room, p_limit - cardinality(v_ids));
    CONTINUE WHEN v_room <= 0;
    FOR v_due IN
      SELECT d.id AS delivery, coalesce(octet_length(ev.body), 0) AS bytes
      FROM (
        SELECT d.id, d.event_id, d.next_attempt_at FROM deliveries d
        WHERE d.endpoint_id = v_endpoint AND d.status = 'pending' AND d.next_attempt_at <= p_now
        ORDER BY d.next_attempt_at, d.id
        LIMIT v_room
        FOR UPDATE SKIP LOCKED
      ) d JOIN events ev ON ev.id = d.event_id
      ORDER BY d.next_attempt_at, d.id
    LOOP
      EXIT endpoints WHEN cardinality(v_ids) > 0 AND v_bytes + v_due.bytes > p_max_bytes;
      v_bytes := v_bytes + v_due.bytes;
      v_ids := v_ids || v_due.delivery;
    END LOOP;
  END LOOP;
  IF cardinality(v_ids) = 0 THEN
    RETURN;
  END IF;
  UPDATE deliveries d SET lease_until = p_lease_until, lease_id = p_lease_id, next_attempt_at = p_lease_until
    WHERE d.id = ANY (v_ids);
  RETURN QUERY
    SELECT d.id, d.account_id, d.endpoint_id, d.event_id, d.status, d.attempt_count, d.next_attempt_at, d.replay_of,
      d.parked_reason, d.created_at, d.updated_at, ev.fields, ev.is_test, (ev.body IS NOT NULL AND NOT d.payload_deleted),
      CASE WHEN d.payload_deleted THEN NULL ELSE ev.body END, ev.upstream_signature
    FROM unnest(v_ids) WITH ORDINALITY AS c(id, n)
    JOIN deliveries d ON d.id = c.id
    JOIN events ev ON ev.id = d.event_id
    ORDER BY c.n;
END
$$;
