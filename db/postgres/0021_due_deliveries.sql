CREATE TABLE "due_deliveries" (
	"delivery_id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_id" text NOT NULL,
	"due_at" bigint NOT NULL
);
--> statement-breakpoint
-- The backfill first, while deliveries_due still finds the pending deliveries without reading the
-- whole table under the lock the DROP INDEX below takes until the migration commits.
INSERT INTO due_deliveries (delivery_id, endpoint_id, event_id, due_at)
SELECT id, endpoint_id, event_id, coalesce(next_attempt_at, 0) FROM deliveries WHERE status = 'pending';
--> statement-breakpoint
DROP INDEX "deliveries_due";--> statement-breakpoint
DROP INDEX "deliveries_parked";--> statement-breakpoint
CREATE INDEX "due_deliveries_claim" ON "due_deliveries" USING btree ("endpoint_id","due_at","delivery_id");--> statement-breakpoint
CREATE INDEX "deliveries_parked" ON "deliveries" USING btree ("endpoint_id","created_at","id") WHERE "deliveries"."parked_reason" IS NOT NULL;
--> statement-breakpoint
-- Due work moves out of the deliveries' rows into due_deliveries (see schema/queue.ts). A
-- completion changed status and next_attempt_at, both held by deliveries_due (and status by
-- deliveries_parked's condition): every one wrote a new version of the row elsewhere, with an entry
-- in each of its indexes (0 of 0.97 updates per delivery HOT, bench/RESULTS.md). Now it changes no
-- indexed column, and a fifth of each page is kept free so that the new version fits beside the
-- old (HOT: no index entry written); the claim reads the small due_deliveries, and the completion
-- deletes the delivery's row there, or moves its due time for a retry.
ALTER TABLE "deliveries" SET (fillfactor = 80);
--> statement-breakpoint
-- Enqueue: each delivery's due row with it.
CREATE OR REPLACE FUNCTION switchboard_enqueue(
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
  INSERT INTO due_deliveries (delivery_id, endpoint_id, event_id, due_at)
  SELECT * FROM unnest(d_ids, d_endpoints, d_events, d_next);
  INSERT INTO event_messages (event_id, account_id, message_id, phone_number_id, kind, status, error_code, received_at)
  SELECT * FROM unnest(m_events, m_accounts, m_messages, m_numbers, m_kinds, m_statuses, m_errors, m_at);
  IF cardinality(d_ids) > 0 THEN
    PERFORM pg_notify('switchboard_work', '');
  END IF;
END
$$;
--> statement-breakpoint
-- Claim: due work read from due_deliveries, in due_deliveries_claim's order (the rest as before).
CREATE OR REPLACE FUNCTION switchboard_claim(p_now bigint, p_lease_id text, p_holder text, p_lease_until bigint, p_limit integer, p_per_endpoint integer, p_max_bytes bigint)
RETURNS TABLE (
  id text, account_id text, endpoint_id text, event_id text, status text, attempt_count integer, next_attempt_at bigint,
  replay_of text, parked_reason text, created_at bigint, updated_at bigint, event_fields text[], is_test boolean,
  payload_available boolean, body bytea, upstream_signature text, signature text
)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  v_endpoint text;
  v_locked text[] := '{}';
  v_free record;
  v_take integer;
  v_stop boolean;
  v_used integer[];
  v_at integer;
  -- The leases to write, in claim order: delivery, endpoint, slot, and the lease id the slot held when read.
  v_ids text[] := '{}';
  v_endpoints text[] := '{}';
  v_slots integer[] := '{}';
  v_seen text[] := '{}';
  v_bytes bigint := 0;
  v_taken text[];
  -- Per endpoint read: where its due deliveries were read from the start, and the last one taken.
  v_due_endpoints text[] := '{}';
  v_due_scanned bigint[] := '{}';
  v_last_taken bigint[] := '{}';
BEGIN
  -- A claim lost to a crash of the server means a lease made again: its commit need not wait for the disk.
  PERFORM set_config('synchronous_commit', 'off', true);
  -- 1. Endpoints with room and due work not in flight (as far as this snapshot shows), oldest due
  --    first, each locked as the loop reaches it; no more of them than the claim can take deliveries.
  FOR v_endpoint IN
    SELECT e.id FROM endpoints e
    LEFT JOIN endpoint_due q ON q.endpoint_id = e.id
    CROSS JOIN LATERAL (
      SELECT count(*) AS busy, coalesce(array_agg(s.delivery_id), '{}') AS held FROM endpoint_slots s
      WHERE s.endpoint_id = e.id AND s.lease_until > p_now
    ) b
    CROSS JOIN LATERAL (
      SELECT w.due_at AS due FROM due_deliveries w
      WHERE w.endpoint_id = e.id AND w.due_at <= p_now AND w.delivery_id <> ALL (b.held)
        AND w.due_at >= CASE WHEN q.scanned_at > p_now - 1000 THEN coalesce(q.last_taken_at - 1000, 0) ELSE 0 END
      ORDER BY w.due_at, w.delivery_id LIMIT 1
    ) m
    WHERE b.busy < p_per_endpoint
    ORDER BY m.due, e.id
  LOOP
    EXIT WHEN cardinality(v_locked) >= p_limit;
    CONTINUE WHEN NOT pg_try_advisory_xact_lock(1398030659, hashtext(v_endpoint));
    v_locked := v_locked || v_endpoint;
  END LOOP;
  IF cardinality(v_locked) = 0 THEN
    RETURN;
  END IF;
  -- 2. Each one's free slots (never made, released, or run out) with the lease each held, and its
  --    oldest due deliveries not in flight, as many as it has room for: one statement for all.
  <<endpoints>>
  FOR v_free IN
    SELECT l.endpoint_id, f.slots, f.seen, f.was, c.ids, c.dues, c.bytes, r.whole
    FROM unnest(v_locked) WITH ORDINALITY AS l(endpoint_id, n)
    LEFT JOIN endpoint_due q ON q.endpoint_id = l.endpoint_id
    -- From the start (whole), or after the last one taken.
    CROSS JOIN LATERAL (
      SELECT NOT coalesce(q.scanned_at > p_now - 1000 AND q.last_taken_at IS NOT NULL, false) AS whole
    ) r
    CROSS JOIN LATERAL (
      SELECT array_agg(g.slot ORDER BY g.slot) FILTER (WHERE NOT coalesce(s.lease_until > p_now, false)) AS slots,
        array_agg(s.lease_id ORDER BY g.slot) FILTER (WHERE NOT coalesce(s.lease_until > p_now, false)) AS seen,
        array_agg(s.delivery_id ORDER BY g.slot) FILTER (WHERE NOT coalesce(s.lease_until > p_now, false)) AS was,
        (SELECT coalesce(array_agg(h.delivery_id), '{}') FROM endpoint_slots h
          WHERE h.endpoint_id = l.endpoint_id AND h.lease_until > p_now) AS held
      FROM generate_series(0, p_per_endpoint - 1) AS g(slot)
      LEFT JOIN endpoint_slots s ON s.endpoint_id = l.endpoint_id AND s.slot = g.slot
    ) f
    CROSS JOIN LATERAL (
      SELECT array_agg(w.delivery_id ORDER BY w.due_at, w.delivery_id) AS ids,
        array_agg(w.due_at ORDER BY w.due_at, w.delivery_id) AS dues,
        array_agg(coalesce(octet_length(ev.body), 0) ORDER BY w.due_at, w.delivery_id) AS bytes
      FROM (
        SELECT w.delivery_id, w.event_id, w.due_at FROM due_deliveries w
        WHERE w.endpoint_id = l.endpoint_id AND w.due_at <= p_now AND w.delivery_id <> ALL (f.held)
          AND w.due_at >= CASE WHEN r.whole THEN 0 ELSE q.last_taken_at - 1000 END
          -- A due row whose delivery is gone or done (left by an event's cascade, until the
          -- retention purge sweeps it) takes no slot and is never sent again.
          AND EXISTS (SELECT FROM deliveries d WHERE d.id = w.delivery_id AND d.status = 'pending')
        ORDER BY w.due_at, w.delivery_id
        LIMIT greatest(least(coalesce(cardinality(f.slots), 0), p_per_endpoint - cardinality(f.held)), 0)
      ) w
      JOIN events ev ON ev.id = w.event_id
    ) c
    ORDER BY l.n
  LOOP
    -- 3. As many of them as the claim's limit and bytes allow, in order; each takes the slot its
    --    run-out lease holds, if it has one, and the others the free slots left, lowest first.
    v_take := 0;
    v_stop := false;
    FOR i IN 1 .. coalesce(cardinality(v_free.ids), 0) LOOP
      v_stop := cardinality(v_ids) + v_take >= p_limit
        OR (cardinality(v_ids) + v_take > 0 AND v_bytes + v_free.bytes[i] > p_max_bytes);
      EXIT WHEN v_stop;
      v_bytes := v_bytes + v_free.bytes[i];
      v_take := v_take + 1;
    END LOOP;
    IF v_take > 0 OR v_free.whole THEN
      v_due_endpoints := v_due_endpoints || v_free.endpoint_id;
      v_due_scanned := v_due_scanned || CASE WHEN v_free.whole THEN p_now END;
      v_last_taken := v_last_taken || CASE WHEN v_take > 0 THEN v_free.dues[v_take] END;
    END IF;
    v_used := '{}';
    FOR i IN 1 .. v_take LOOP
      v_at := array_position(v_free.was, v_free.ids[i]);
      IF v_at IS NOT NULL THEN
        v_used := v_used || v_at;
      END IF;
    END LOOP;
    FOR i IN 1 .. v_take LOOP
      v_at := array_position(v_free.was, v_free.ids[i]);
      IF v_at IS NULL THEN
        v_at := 1;
        WHILE v_at = ANY (v_used) LOOP
          v_at := v_at + 1;
        END LOOP;
        v_used := v_used || v_at;
      END IF;
      v_ids := v_ids || v_free.ids[i];
      v_endpoints := v_endpoints || v_free.endpoint_id;
      v_slots := v_slots || v_free.slots[v_at];
      v_seen := v_seen || v_free.seen[v_at];
    END LOOP;
    EXIT endpoints WHEN v_stop;
  END LOOP;
  -- Where the next claims read from (unchanged where nothing was taken), and when from the start.
  -- (A row is made the first time, unless its endpoint was deleted meanwhile.)
  WITH x AS (
    SELECT * FROM unnest(v_due_endpoints, v_last_taken, v_due_scanned) AS x(endpoint_id, last_taken_at, scanned_at)
  ), moved AS (
    UPDATE endpoint_due q SET last_taken_at = coalesce(x.last_taken_at, q.last_taken_at),
      scanned_at = coalesce(x.scanned_at, q.scanned_at)
    FROM x WHERE q.endpoint_id = x.endpoint_id
  )
  INSERT INTO endpoint_due (endpoint_id, last_taken_at, scanned_at)
  SELECT x.endpoint_id, x.last_taken_at, x.scanned_at
  FROM x JOIN endpoints e ON e.id = x.endpoint_id
  WHERE NOT EXISTS (SELECT FROM endpoint_due q WHERE q.endpoint_id = x.endpoint_id)
  FOR KEY SHARE OF e
  ON CONFLICT DO NOTHING;
  IF cardinality(v_ids) = 0 THEN
    RETURN;
  END IF;
  -- 4. The leases: a slot is written only if it still holds the lease read in 2 (see above); a slot
  --    never made is made (unless its endpoint was deleted meanwhile).
  WITH x AS (
    SELECT * FROM unnest(v_endpoints, v_slots, v_ids, v_seen) AS x(endpoint_id, slot, delivery_id, seen)
  ), leased AS (
    UPDATE endpoint_slots s SET delivery_id = x.delivery_id, lease_id = p_lease_id, holder = p_holder, lease_until = p_lease_until
    FROM x WHERE s.endpoint_id = x.endpoint_id AND s.slot = x.slot AND s.lease_id IS NOT DISTINCT FROM x.seen
      AND NOT coalesce(s.lease_until > p_now, false)
    RETURNING x.delivery_id
  ), made AS (
    INSERT INTO endpoint_slots (endpoint_id, slot, delivery_id, lease_id, holder, lease_until)
    SELECT x.endpoint_id, x.slot, x.delivery_id, p_lease_id, p_holder, p_lease_until
    FROM x JOIN endpoints e ON e.id = x.endpoint_id
    WHERE NOT EXISTS (SELECT FROM endpoint_slots s WHERE s.endpoint_id = x.endpoint_id AND s.slot = x.slot)
    FOR KEY SHARE OF e
    ON CONFLICT DO NOTHING
    RETURNING delivery_id
  )
  SELECT coalesce(array_agg(t.delivery_id), '{}') INTO v_taken
  FROM (SELECT delivery_id FROM leased UNION ALL SELECT delivery_id FROM made) t;
  RETURN QUERY
    SELECT d.id, d.account_id, d.endpoint_id, d.event_id, d.status, d.attempt_count, p_lease_until, d.replay_of,
      d.parked_reason, d.created_at, d.updated_at, ev.fields, ev.is_test, (ev.body IS NOT NULL AND NOT d.payload_deleted),
      CASE WHEN d.payload_deleted THEN NULL ELSE ev.body END, ev.upstream_signature, d.signature
    FROM unnest(v_ids) WITH ORDINALITY AS c(id, n)
    JOIN deliveries d ON d.id = c.id
    JOIN events ev ON ev.id = d.event_id
    WHERE c.id = ANY (v_taken)
    ORDER BY c.n;
END
$$;
--> statement-breakpoint
-- Completion: the delivery's due row deleted when it succeeds or parks, its due time moved when retried.
CREATE OR REPLACE FUNCTION switchboard_complete(
  c_ids text[], c_leases text[], c_endpoints text[], c_statuses text[], c_attempted integer[], c_next bigint[],
  c_reasons text[], c_drop boolean[], c_now bigint[],
  a_deliveries text[], a_leases text[], a_numbers integer[], a_at bigint[], a_codes integer[], a_errors text[],
  a_excerpts text[], a_durations integer[],
  h_deliveries text[], h_leases text[], h_hours bigint[], h_succeeded integer[], h_failed integer[], h_parked integer[],
  s_deliveries text[], s_leases text[], s_at bigint[], p_success_resolution bigint)
RETURNS TABLE (id text, lease_id text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  -- A completion lost to a crash of the server means an attempt made again (DeliveryQueue): its
  -- commit need not wait for the disk. An enqueue's does: the event was acknowledged.
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH u AS (
    SELECT * FROM unnest(c_ids, c_leases, c_endpoints, c_statuses, c_attempted, c_next, c_reasons, c_drop, c_now)
      AS u(id, lease_id, endpoint_id, status, attempted, next, reason, drop_payload, now)
  ), freed AS (
    UPDATE endpoint_slots s SET delivery_id = NULL, lease_id = NULL, holder = NULL, lease_until = NULL
    FROM u WHERE s.endpoint_id = u.endpoint_id AND s.delivery_id = u.id AND s.lease_id = u.lease_id
    RETURNING u.id, u.lease_id
  ), done AS (
    UPDATE deliveries d SET status = u.status, attempt_count = d.attempt_count + u.attempted, next_attempt_at = u.next,
      parked_reason = u.reason, payload_deleted = d.payload_deleted OR u.drop_payload, updated_at = u.now
    FROM u JOIN freed ON freed.id = u.id AND freed.lease_id = u.lease_id WHERE d.id = u.id
    RETURNING d.id, u.lease_id, d.endpoint_id, d.status, d.next_attempt_at
  ), retried AS (
    UPDATE due_deliveries w SET due_at = done.next_attempt_at FROM done
    WHERE w.delivery_id = done.id AND done.status = 'pending'
  ), finished AS (
    DELETE FROM due_deliveries w USING done WHERE w.delivery_id = done.id AND done.status <> 'pending'
  ), recorded AS (
    INSERT INTO attempts (delivery_id, number, at, status_code, error, response_excerpt, duration_ms)
    SELECT a.delivery_id, a.number, a.at, a.status_code, a.error, a.response_excerpt, a.duration_ms
    FROM unnest(a_deliveries, a_leases, a_numbers, a_at, a_codes, a_errors, a_excerpts, a_durations)
      AS a(delivery_id, lease_id, number, at, status_code, error, response_excerpt, duration_ms)
    WHERE (a.delivery_id, a.lease_id) IN (SELECT done.id, done.lease_id FROM done)
  ), counted AS (
    INSERT INTO endpoint_hours (endpoint_id, hour, succeeded, failed, parked)
    SELECT done.endpoint_id, h.hour, sum(h.succeeded)::int, sum(h.failed)::int, sum(h.parked)::int
    FROM unnest(h_deliveries, h_leases, h_hours, h_succeeded, h_failed, h_parked) AS h(delivery_id, lease_id, hour, succeeded, failed, parked)
    JOIN done ON done.id = h.delivery_id AND done.lease_id = h.lease_id
    GROUP BY done.endpoint_id, h.hour ORDER BY done.endpoint_id, h.hour
    ON CONFLICT (endpoint_id, hour) DO UPDATE SET succeeded = endpoint_hours.succeeded + excluded.succeeded,
      failed = endpoint_hours.failed + excluded.failed, parked = endpoint_hours.parked + excluded.parked
  ), healthy AS (
    UPDATE endpoints e SET consecutive_failures = 0, last_success_at = x.at, warned_at = NULL
    FROM (
      SELECT done.endpoint_id, max(s.at) AS at FROM unnest(s_deliveries, s_leases, s_at) AS s(delivery_id, lease_id, at)
      JOIN done ON done.id = s.delivery_id AND done.lease_id = s.lease_id GROUP BY done.endpoint_id
    ) x
    WHERE e.id = x.endpoint_id AND (e.consecutive_failures <> 0 OR e.warned_at IS NOT NULL OR e.last_success_at IS NULL
      OR e.last_success_at <= x.at - p_success_resolution)
  )
  SELECT done.id, done.lease_id FROM done;
END
$$;
