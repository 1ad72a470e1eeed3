-- PostgreSQL's own statements of the relational adapter (api/storage/postgres/store.py).

-- name: enqueue
-- the outbox write of an entry: one INSERT ... SELECT, nothing read without webhooks
INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index,
    state, attempts, next_attempt_at, created_at, kind)
SELECT w.id, w.stammtisch_id, :position, e.ord - 1, 'pending', 0, :at, :at, e.kind
FROM webhooks w, jsonb_array_elements_text(CAST(:kinds AS JSONB)) WITH ORDINALITY AS e(kind, ord)
WHERE w.stammtisch_id = :st AND w.active AND jsonb_exists(w.kinds, e.kind)
ORDER BY w.id, e.ord;

-- name: lock_game
-- the game's row, locked until the write transaction ends: writers of one game go in turn
SELECT id FROM games WHERE id = :game_id FOR UPDATE;

-- name: lock_key
SELECT pg_advisory_xact_lock(:key);

-- name: claim
-- the oldest due delivery of each active webhook with no attempt in flight, the least
-- recently served webhook first; their rows locked (SKIP LOCKED: a webhook another sender is
-- claiming right now is left to it) and marked busy until the lease ends
WITH free AS (
    SELECT w.id FROM webhooks w
    JOIN (SELECT d.webhook_id, min(d.next_attempt_at) AS due FROM webhook_deliveries d
          WHERE d.state = 'pending' AND d.next_attempt_at <= :now
          GROUP BY d.webhook_id) q ON q.webhook_id = w.id
    WHERE w.active AND (w.busy_until IS NULL OR w.busy_until <= :now)
    ORDER BY w.busy_until NULLS FIRST, q.due, w.id LIMIT :limit
    FOR UPDATE OF w SKIP LOCKED
), busy AS (
    UPDATE webhooks w SET busy_until = :lease FROM free WHERE w.id = free.id
), pick AS (
    SELECT DISTINCT ON (d.webhook_id) d.id
    FROM webhook_deliveries d JOIN free ON free.id = d.webhook_id
    WHERE d.state = 'pending' AND d.next_attempt_at <= :now
    ORDER BY d.webhook_id, d.next_attempt_at, d.id
), claimed AS (
    UPDATE webhook_deliveries d
    SET attempts = d.attempts + 1, last_attempt_at = :now, next_attempt_at = :lease
    FROM pick WHERE d.id = pick.id
    RETURNING d.id, d.webhook_id, d.stammtisch_id, d.position, d.event_index, d.payload, d.state, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.last_attempt_at, d.delivered_at, d.created_at, d.kind
)
SELECT d.*, w.url, w.secret, s.slug, e.game_id, e.seq, e.events, e.recorded_at
FROM claimed d JOIN webhooks w ON w.id = d.webhook_id
JOIN stammtische s ON s.id = d.stammtisch_id
LEFT JOIN game_events e ON e.stammtisch_id = d.stammtisch_id AND e.position = d.position
ORDER BY d.next_attempt_at, d.id;
