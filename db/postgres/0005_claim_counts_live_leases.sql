-- The claim counts an endpoint's live leases through deliveries_lease alone, in lease order and
-- stopping at the cap. Until now the count could run through deliveries_due (every pending
-- delivery of the endpoint: 42 ms a claim with 25,000 waiting), or as a bitmap scan, which visits
-- the row of every lease ended in the last WEBHOOK_TIMEOUT_MS + 60 s whose index entry vacuum has
-- not yet removed (thousands at a few thousand deliveries a second). A plain index scan marks
-- those entries dead the first time it meets them, so later claims skip them without reading the
-- table (bench/RESULTS.md: 42 ms to 5 ms a claim). A live lease is always a pending delivery:
-- completion clears lease_until.
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
  v_locked text[] := '{}';
  v_rooms integer[];
  v_ids text[] := '{}';
  v_bytes bigint := 0;
  v_due record;
BEGIN
  -- 1. Endpoints with due work and room (as far as this snapshot shows), oldest due first, each
  --    locked as the loop reaches it (skipped when another claim holds it); no more of them than
  --    the claim can take deliveries.
  FOR v_endpoint IN
    SELECT e.id FROM endpoints e
    CROSS JOIN LATERAL (SELECT min(d.next_attempt_at) AS due FROM deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending') m
    WHERE m.due <= p_now
      AND (SELECT count(*) FROM (SELECT FROM deliveries d WHERE d.endpoint_id = e.id AND d.lease_until IS NOT NULL AND d.lease_until > p_now ORDER BY d.lease_until LIMIT p_per_endpoint) live) < p_per_endpoint
    ORDER BY m.due, e.id
  LOOP
    EXIT WHEN cardinality(v_locked) >= p_limit;
    CONTINUE WHEN NOT pg_try_advisory_xact_lock(1398030659, hashtext(v_endpoint));
    v_locked := v_locked || v_endpoint;
  END LOOP;
  IF cardinality(v_locked) = 0 THEN
    RETURN;
  END IF;
  -- 2. Their live leases, counted by a statement that starts after the locks are held.
  SELECT array_agg(greatest(p_per_endpoint - c.n, 0)::integer ORDER BY l.n) INTO v_rooms
  FROM unnest(v_locked) WITH ORDINALITY AS l(endpoint_id, n)
  CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM (SELECT FROM deliveries d WHERE d.endpoint_id = l.endpoint_id AND d.lease_until IS NOT NULL AND d.lease_until > p_now ORDER BY d.lease_until LIMIT p_per_endpoint) live
  ) c;
  -- 3. Each one's oldest due deliveries up to its room, in one statement, in claim order.
  FOR v_due IN
    SELECT d.id AS delivery, coalesce(octet_length(ev.body), 0) AS bytes
    FROM unnest(v_locked, v_rooms) WITH ORDINALITY AS l(endpoint_id, room, n)
    CROSS JOIN LATERAL (
      SELECT d.id, d.event_id, d.next_attempt_at FROM deliveries d
      WHERE d.endpoint_id = l.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= p_now
      ORDER BY d.next_attempt_at, d.id
      LIMIT l.room
      FOR UPDATE SKIP LOCKED
    ) d
    JOIN events ev ON ev.id = d.event_id
    ORDER BY l.n, d.next_attempt_at, d.id
  LOOP
    EXIT WHEN cardinality(v_ids) >= p_limit;
    EXIT WHEN cardinality(v_ids) > 0 AND v_bytes + v_due.bytes > p_max_bytes;
    v_bytes := v_bytes + v_due.bytes;
    v_ids := v_ids || v_due.delivery;
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
