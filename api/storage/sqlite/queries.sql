-- SQLite's own statements of the relational adapter (api/storage/sqlite/store.py).

-- name: enqueue
-- the outbox write of an entry: one INSERT ... SELECT, nothing read without webhooks
INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, state,
    attempts, next_attempt_at, created_at, kind) SELECT w.id, w.stammtisch_id, :position,
    e.key, 'pending', 0, :at, :at, e.value FROM webhooks w JOIN json_each(:kinds) e WHERE
    w.stammtisch_id = :st AND w.active AND EXISTS (SELECT 1 FROM json_each(w.kinds) k WHERE
    k.value = e.value) ORDER BY w.id, e.key;

-- name: pick
-- the claim: the oldest due delivery of each active webhook with no attempt in flight,
-- the least recently served webhook first (never served, then the oldest last claim)
SELECT id, webhook_id FROM (SELECT d.id, d.webhook_id, d.next_attempt_at, w.busy_until,
    row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) AS n FROM
    webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.state = 'pending' AND
    d.next_attempt_at <= :now AND w.active AND (w.busy_until IS NULL OR w.busy_until <= :now))
    WHERE n = 1 ORDER BY busy_until IS NOT NULL, busy_until, next_attempt_at, id LIMIT :limit;

-- name: busy
UPDATE webhooks SET busy_until = :lease WHERE id IN (SELECT value FROM json_each(:hooks));

-- name: claim
-- the oldest due delivery of each active webhook with no attempt in flight, the least
-- recently served webhook first; their rows locked (SKIP LOCKED: a webhook another sender is
-- claiming right now is left to it) and marked busy until the lease ends
UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = :now, next_attempt_at
    = :lease WHERE id IN (SELECT value FROM json_each(:ids));

-- name: claimed
SELECT d.*, w.url, w.secret, s.slug, e.game_id, e.seq, e.events, e.recorded_at FROM
    webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN stammtische s ON s.id =
    d.stammtisch_id LEFT JOIN game_events e ON e.stammtisch_id = d.stammtisch_id AND e.position
    = d.position WHERE d.id IN (SELECT value FROM json_each(:ids)) ORDER BY d.next_attempt_at,
    d.id;

-- name: any_due
-- anything due at all (a read, no lock): an idle sender takes no write lock
SELECT 1 FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.state =
    'pending' AND d.next_attempt_at <= :now AND w.active AND (w.busy_until IS NULL OR
    w.busy_until <= :now) LIMIT 1;

-- name: since
-- rows of every Stammtisch by rowid (one writer at a time: it grows in commit order)
SELECT rowid, stammtisch_id, position, game_id, seq, events, recorded_at FROM game_events WHERE
    rowid > :rowid ORDER BY rowid LIMIT :limit;
