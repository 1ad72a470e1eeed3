-- The statements of the relational adapter (api/storage/relational.py), written once for
-- SQLite and PostgreSQL: parameters :name (compiled per dialect by SQLAlchemy), least and
-- greatest in braces (the dialect's functions). Each store's own: sqlite/, postgres/queries.sql.

-- name: add_stammtisch
-- a taken key (slug, log entry, idempotency key) inserts nothing and returns no row
INSERT INTO stammtische (slug, name, rules, private, token_hash, created_at, odds_shown)
    VALUES (:slug, :name, :rules, :private, :token_hash, :created_at, :odds_shown) ON CONFLICT
    (slug) DO NOTHING RETURNING id;

-- name: get_stammtisch
SELECT id, slug, name, rules, private, token_hash, created_at, odds_shown FROM stammtische
    WHERE slug = :slug;

-- name: update_stammtisch
UPDATE stammtische SET name = :name, rules = :rules, private = :private, odds_shown = :odds_shown
WHERE id = :id;

-- name: add_player
INSERT INTO players (stammtisch_id, name, retired, created_at) VALUES (:stammtisch_id, :name,
    :retired, :created_at) RETURNING id;

-- name: list_players
SELECT id, stammtisch_id, name, retired, created_at, retired_at FROM players WHERE
    stammtisch_id = :stammtisch_id ORDER BY id;

-- name: update_player
UPDATE players SET name = :name, retired = :retired, retired_at = :retired_at WHERE id = :id;

-- name: mark_player
-- a Stammtisch's statistics are stale: its mark's version goes up
INSERT INTO stats_stale (stammtisch_id, version) SELECT stammtisch_id, 1 FROM players
WHERE id = :id ON CONFLICT (stammtisch_id) DO UPDATE SET version = stats_stale.version + 1;

-- name: mark_game
INSERT INTO stats_stale (stammtisch_id, version) SELECT stammtisch_id, 1 FROM games
WHERE id = :id ON CONFLICT (stammtisch_id) DO UPDATE SET version = stats_stale.version + 1;

-- name: mark
INSERT INTO stats_stale (stammtisch_id, version) VALUES (:id, 1) ON CONFLICT (stammtisch_id) DO
    UPDATE SET version = stats_stale.version + 1;

-- name: add_game
INSERT INTO games (stammtisch_id, header, rules, options, played_at, played_at_utc,
    played_local, year, source, created_at) VALUES (:stammtisch_id, :header, :rules, :options,
    :played_at, :played_at_utc, :played_local, :year, :source, :created_at) RETURNING id;

-- name: add_seat
INSERT INTO game_players (game_id, seat, player_id, name, starter) VALUES (:game_id, :seat,
    :player_id, :name, :starter);

-- name: get_game
SELECT g.id, g.stammtisch_id, g.header, g.rules, g.options, g.played_at, g.played_at_utc,
       g.year, g.source, g.created_at,
       CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END,
       coalesce(f.phase, 'half1'), f.loser, g.played_local, g.number
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id WHERE g.id = :game_id;

-- name: list_games
SELECT g.id, g.stammtisch_id, g.header, g.rules, g.options, g.played_at, g.played_at_utc,
       g.year, g.source, g.created_at,
       CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END,
       coalesce(f.phase, 'half1'), f.loser, g.played_local, g.number
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = :stammtisch_id
  AND (CAST(:year AS BIGINT) IS NULL OR g.year = CAST(:year AS BIGINT))
  AND (CAST(:status AS TEXT) IS NULL OR CASE WHEN g.abandoned_at IS NULL
       THEN coalesce(f.status, 'running') ELSE 'abandoned' END = CAST(:status AS TEXT))
  AND (CAST(:player_id AS BIGINT) IS NULL OR EXISTS (SELECT 1 FROM game_players p
       WHERE p.game_id = g.id AND p.player_id = CAST(:player_id AS BIGINT))) ORDER BY g.played_at_utc DESC, g.id DESC LIMIT :limit OFFSET :offset;

-- name: count_games
SELECT count(*) FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = :stammtisch_id
  AND (CAST(:year AS BIGINT) IS NULL OR g.year = CAST(:year AS BIGINT))
  AND (CAST(:status AS TEXT) IS NULL OR CASE WHEN g.abandoned_at IS NULL
       THEN coalesce(f.status, 'running') ELSE 'abandoned' END = CAST(:status AS TEXT))
  AND (CAST(:player_id AS BIGINT) IS NULL OR EXISTS (SELECT 1 FROM game_players p
       WHERE p.game_id = g.id AND p.player_id = CAST(:player_id AS BIGINT)));

-- name: game_ids
SELECT id FROM games ORDER BY id;

-- name: slugs
SELECT id, slug FROM stammtische ORDER BY id;

-- name: version
SELECT seq FROM game_log WHERE game_id = :game_id ORDER BY seq DESC LIMIT 1;

-- name: state
-- the version of a game (its last entry) and whether it was called off, one look-up
SELECT (SELECT seq FROM game_log WHERE game_id = :game_id ORDER BY seq DESC LIMIT 1),
    abandoned_at FROM games WHERE id = :game_id;

-- name: abandon
UPDATE games SET abandoned_at = :at WHERE id = :game_id AND abandoned_at IS NULL;

-- name: load_log
SELECT game_id, seq, kind, body, recorded_at FROM game_log WHERE game_id = :game_id ORDER BY
    seq;

-- name: append
INSERT INTO game_log (game_id, seq, kind, body, recorded_at) VALUES (:game_id, :seq, :kind,
    :body, :recorded_at);

-- name: get_response
SELECT stammtisch_id, key_hash, fingerprint, status, content_type, body, created_at FROM
    idempotency_keys WHERE stammtisch_id = :stammtisch_id AND key_hash = :key_hash;

-- name: save_response
INSERT INTO idempotency_keys (stammtisch_id, key_hash, fingerprint, status, content_type, body,
    created_at) VALUES (:stammtisch_id, :key_hash, :fingerprint, :status, :content_type, :body,
    :created_at) ON CONFLICT (stammtisch_id, key_hash) DO NOTHING RETURNING 1;

-- name: purge_responses
DELETE FROM idempotency_keys WHERE created_at < :before;

-- name: take_token
-- the rate limits (migration 0007): one token taken in one statement (the expressions of
-- the UPDATE see the row before it: refilled = tokens + elapsed x rate, capped)
INSERT INTO rate_limits AS r (who, tokens, updated_at, granted) VALUES (:who, :burst - 1.0,
    :now, 1) ON CONFLICT (who) DO UPDATE SET tokens = {least}(:burst, r.tokens +
    {greatest}(0.0, :now - r.updated_at) * :rate) - CASE WHEN {least}(:burst, r.tokens +
    {greatest}(0.0, :now - r.updated_at) * :rate) >= 1.0 THEN 1 ELSE 0 END, granted = CASE WHEN
    {least}(:burst, r.tokens + {greatest}(0.0, :now - r.updated_at) * :rate) >= 1.0 THEN 1 ELSE
    0 END, updated_at = {greatest}(r.updated_at, :now) RETURNING tokens, granted;

-- name: peek_token
SELECT {least}(:burst, tokens + {greatest}(0.0, :now - updated_at) * :rate) FROM rate_limits
    WHERE who = :who;

-- name: purge_tokens
DELETE FROM rate_limits WHERE updated_at < :before;

-- name: note_failure
INSERT INTO login_failures AS f (who, failures, last_at) VALUES (:who, 1, :now) ON CONFLICT
    (who) DO UPDATE SET failures = f.failures + 1, last_at = {greatest}(f.last_at, :now)
    RETURNING failures, last_at;

-- name: failures
SELECT failures, last_at FROM login_failures WHERE who = :who;

-- name: clear_failures
DELETE FROM login_failures WHERE who = :who;

-- name: add_login
-- logins of the pub form (migration 0010)
INSERT INTO web_sessions (id_hash, stammtisch_id, token_hash, expires_at) VALUES (:id_hash,
    :stammtisch_id, :token_hash, :expires_at);

-- name: get_login
SELECT id_hash, stammtisch_id, token_hash, expires_at FROM web_sessions WHERE id_hash =
    :id_hash;

-- name: delete_login
DELETE FROM web_sessions WHERE id_hash = :id_hash;

-- name: purge_logins
DELETE FROM web_sessions WHERE expires_at < :before;

-- name: new_key
UPDATE stammtische SET token_hash = :token_hash WHERE id = :id;

-- name: old_logins
DELETE FROM web_sessions WHERE stammtisch_id = :id AND token_hash <> :token_hash;

-- name: next_position
-- the outbox of domain events (migration 0012): a row per entry at the Stammtisch's next
-- position (its row of event_positions locked until the commit: positions commit in order)
INSERT INTO event_positions (stammtisch_id, position) VALUES (:st, 1) ON CONFLICT
    (stammtisch_id) DO UPDATE SET position = event_positions.position + 1 RETURNING position;

-- name: add_events
INSERT INTO game_events (stammtisch_id, position, game_id, seq, events, recorded_at) VALUES
    (:st, :position, :game, :seq, :events, :at);

-- name: stammtisch_events
SELECT stammtisch_id, position, game_id, seq, events, recorded_at FROM game_events WHERE
    stammtisch_id = :id AND position > :after ORDER BY position LIMIT :limit;

-- name: game_events
SELECT stammtisch_id, position, game_id, seq, events, recorded_at FROM game_events WHERE
    game_id = :id AND seq > :after ORDER BY seq LIMIT :limit;

-- name: last_position
SELECT position FROM event_positions WHERE stammtisch_id = :id;

-- name: stammtisch_ids
-- the statistics read model (migration 0006)
SELECT id FROM stammtische ORDER BY id;

-- name: stale
SELECT stammtisch_id, version FROM stats_stale;

-- name: add_period
INSERT INTO stats_periods VALUES (:st, :year, :games, :body, :at, :version);

-- name: clear_mark
DELETE FROM stats_stale WHERE stammtisch_id = :st AND version = :version;

-- name: read_stats
SELECT body FROM stats_periods WHERE stammtisch_id = :id AND year = :year;

-- name: stats_years
SELECT stammtisch_id, year, games FROM stats_periods WHERE year <> 0 AND games > 0 AND
    (CAST(:id AS BIGINT) IS NULL OR stammtisch_id = CAST(:id AS BIGINT)) ORDER BY
    stammtisch_id, year DESC;

-- name: stats_computed
SELECT stammtisch_id FROM stats_periods WHERE year = 0;

-- name: add_webhook
-- webhooks and their outbox (migration 0013)
INSERT INTO webhooks (stammtisch_id, url, kinds, secret, active, description, created_at)
    VALUES (:st, :url, :kinds, :secret, :active, :description, :at) RETURNING id,
    stammtisch_id, url, kinds, secret, active, description, created_at;

-- name: list_webhooks
SELECT id, stammtisch_id, url, kinds, secret, active, description, created_at FROM webhooks
    WHERE stammtisch_id = :st ORDER BY id;

-- name: get_webhook
SELECT id, stammtisch_id, url, kinds, secret, active, description, created_at FROM webhooks
    WHERE id = :id AND stammtisch_id = :st;

-- name: update_webhook
UPDATE webhooks SET url = :url, kinds = :kinds, secret = :secret, active = :active, description
    = :description WHERE id = :id;

-- name: delete_webhook
DELETE FROM webhooks WHERE id = :id;

-- name: add_ping
INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, payload,
    state, attempts, next_attempt_at, created_at, kind) VALUES (:id, :st, NULL, 0, :payload,
    'pending', 0, :at, :at, 'ping') RETURNING id, webhook_id, stammtisch_id, position,
    event_index, payload, state, attempts, next_attempt_at, last_status, last_error,
    last_attempt_at, delivered_at, created_at, kind;

-- name: deliveries
SELECT id, webhook_id, stammtisch_id, position, event_index, payload, state, attempts,
    next_attempt_at, last_status, last_error, last_attempt_at, delivered_at, created_at, kind
    FROM webhook_deliveries WHERE webhook_id = :id ORDER BY id DESC LIMIT :limit OFFSET :offset;

-- name: count_deliveries
SELECT count(*) FROM webhook_deliveries WHERE webhook_id = :id;

-- name: get_delivery
SELECT id, webhook_id, stammtisch_id, position, event_index, payload, state, attempts,
    next_attempt_at, last_status, last_error, last_attempt_at, delivered_at, created_at, kind
    FROM webhook_deliveries WHERE id = :id AND webhook_id = :webhook;

-- name: redeliver
UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = :at WHERE id = :id;

-- name: backlog
-- the due deliveries (how many, the oldest due), and the oldest due of a webhook without an
-- attempt in flight (one that waits for the sender, not for its receiver)
SELECT count(*), min(d.next_attempt_at), min(CASE WHEN w.busy_until IS NULL OR w.busy_until <=
    :now THEN d.next_attempt_at END) FROM webhook_deliveries d JOIN webhooks w ON w.id =
    d.webhook_id WHERE d.state = 'pending' AND d.next_attempt_at <= :now AND w.active;

-- name: purge_deliveries
DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < :before;

-- name: free
-- before its outcome is stored: the webhook of a finished attempt is free for its next
-- one, busy until the attempt's claim (past; it orders the turns of the webhooks), if this
-- attempt still holds it (its lease: a late outcome frees no one else's claim)
UPDATE webhooks SET busy_until = d.last_attempt_at FROM (SELECT webhook_id, last_attempt_at,
    next_attempt_at FROM webhook_deliveries WHERE id = :id) d WHERE webhooks.id = d.webhook_id
    AND webhooks.busy_until = d.next_attempt_at;

-- name: finish
UPDATE webhook_deliveries SET state = :state, next_attempt_at = :next, last_status = :status,
    last_error = :error, delivered_at = coalesce(:delivered, delivered_at) WHERE id = :id;

-- name: luck_pending
-- the finished games of Stammtische (ids: RelationalRepository._in) whose luck figures
-- (migration 0017) are missing or were computed for another version (last entry) of the game
SELECT game_id, seq FROM (SELECT f.game_id, (SELECT max(l.seq) FROM game_log l WHERE
    l.game_id = f.game_id) AS seq FROM game_facts f JOIN games g ON g.id = f.game_id WHERE
    f.status = 'finished' AND g.stammtisch_id IN ({ids})) v WHERE seq IS NOT NULL AND NOT
    EXISTS (SELECT 1 FROM luck_facts k WHERE k.game_id = v.game_id AND k.seq = v.seq) ORDER BY
    game_id;

-- name: delete_luck
DELETE FROM luck_facts WHERE game_id IN ({ids});

-- name: add_luck
INSERT INTO luck_facts (game_id, player_id, seq, turns, expected, survived, split, luck,
    given_away) VALUES (:game_id, :player_id, :seq, :turns, :expected, :survived, :split, :luck,
    :given_away);

-- name: seats
-- the seats of games (ids: RelationalRepository._in)
SELECT game_id, seat, player_id, name, starter FROM game_players WHERE game_id IN ({ids}) ORDER
    BY game_id, seat;
