-- The one row of "changes" (see schema.ts), and the delivery queue's claim as one server-side
-- function: a claim is then one round trip and one short transaction.
INSERT INTO "changes" ("id", "seq") VALUES (1, 0);
--> statement-breakpoint
-- Leases up to p_limit due deliveries, endpoints with the oldest due work first, never giving an
-- endpoint more than p_per_endpoint live leases in total across every instance, and stopping
-- before the claimed bodies pass p_max_bytes (the first always goes). Returns them in claim order.
--
-- Race-free between instances: an endpoint is claimed from by one transaction at a time (a
-- transaction-level advisory lock, skipped when another claim holds it), and its live leases are
-- counted by a statement that starts after that lock is held. In READ COMMITTED each statement
-- of a function sees every transaction committed before it started, so the count includes the
-- leases of any claim that held the lock before. A statement that took the lock and counted at
-- once would count on a snapshot from before the lock, and could miss them.
CREATE FUNCTION switchboard_claim(p_now bigint, p_lease_id text, p_lease_until bigint, p_limit integer, p_per_endpoint integer, p_max_bytes bigint)
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
      FROM deliveries d JOIN events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = v_endpoint AND d.status = 'pending' AND d.next_attempt_at <= p_now
      ORDER BY d.next_attempt_at, d.id
      LIMIT v_room
      FOR UPDATE OF d SKIP LOCKED
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
