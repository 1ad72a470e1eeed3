-- Named queries of the PostgreSQL adapter. Parameters are bound (%(name)s), never formatted in;
-- a parameter that may be NULL is cast, so that PostgreSQL knows its type.

-- name: insert_stammtisch
INSERT INTO stammtische (slug, name, rules, private, token_hash, created_at)
VALUES (%(slug)s, %(name)s, %(rules)s, %(private)s, %(token_hash)s, %(created_at)s)
ON CONFLICT (slug) DO NOTHING
RETURNING id;

-- name: get_stammtisch
SELECT id, slug, name, rules, private, token_hash, created_at
FROM stammtische WHERE slug = %(slug)s;

-- name: update_stammtisch
UPDATE stammtische SET name = %(name)s, rules = %(rules)s, private = %(private)s
WHERE id = %(id)s;

-- name: insert_player
INSERT INTO players (stammtisch_id, name, retired, created_at)
VALUES (%(stammtisch_id)s, %(name)s, false, %(created_at)s)
RETURNING id;

-- name: list_players
SELECT id, stammtisch_id, name, retired, created_at, retired_at
FROM players WHERE stammtisch_id = %(stammtisch_id)s ORDER BY id;

-- name: update_player
UPDATE players SET name = %(name)s, retired = %(retired)s, retired_at = %(retired_at)s::timestamp
WHERE id = %(id)s;

-- name: mark_player
INSERT INTO stats_stale (stammtisch_id, version)
SELECT stammtisch_id, 1 FROM players WHERE id = %(id)s
ON CONFLICT (stammtisch_id) DO UPDATE SET version = stats_stale.version + 1;

-- name: insert_game
INSERT INTO games (stammtisch_id, header, rules, options, played_at, played_at_utc,
                   played_local, year, source, created_at)
VALUES (%(stammtisch_id)s, %(header)s, %(rules)s, %(options)s, %(played_at)s::text,
        %(played_at_utc)s, %(played_local)s, %(year)s, %(source)s, %(created_at)s)
RETURNING id;

-- name: insert_game_player
INSERT INTO game_players (game_id, seat, player_id, name, starter)
VALUES (%(game_id)s, %(seat)s, %(player_id)s, %(name)s, %(starter)s);

-- name: get_game
SELECT g.id, g.stammtisch_id, g.header, g.rules, g.options, g.played_at, g.played_at_utc,
       g.year, g.source, g.created_at,
       CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END,
       coalesce(f.phase, 'half1'), f.loser, g.played_local, g.number
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.id = %(game_id)s;

-- The game row, locked until the write transaction ends: writers of one game go in turn
-- name: lock_game
SELECT id FROM games WHERE id = %(game_id)s FOR UPDATE;

-- name: game_players
SELECT game_id, seat, player_id, name, starter
FROM game_players WHERE game_id = ANY(%(game_ids)s)
ORDER BY game_id, seat;

-- name: list_games
SELECT g.id, g.stammtisch_id, g.header, g.rules, g.options, g.played_at, g.played_at_utc,
       g.year, g.source, g.created_at,
       CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END,
       coalesce(f.phase, 'half1'), f.loser, g.played_local, g.number
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = %(stammtisch_id)s
  AND (%(year)s::bigint IS NULL OR g.year = %(year)s::bigint)
  AND (%(status)s::text IS NULL OR CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END = %(status)s::text)
  AND (%(player_id)s::bigint IS NULL OR EXISTS (
        SELECT 1 FROM game_players p
        WHERE p.game_id = g.id AND p.player_id = %(player_id)s::bigint))
ORDER BY g.played_at_utc DESC, g.id DESC
LIMIT %(limit)s OFFSET %(offset)s;

-- name: count_games
SELECT count(*)
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = %(stammtisch_id)s
  AND (%(year)s::bigint IS NULL OR g.year = %(year)s::bigint)
  AND (%(status)s::text IS NULL OR CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END = %(status)s::text)
  AND (%(player_id)s::bigint IS NULL OR EXISTS (
        SELECT 1 FROM game_players p
        WHERE p.game_id = g.id AND p.player_id = %(player_id)s::bigint));

-- name: game_ids
SELECT id FROM games ORDER BY id;

-- name: stammtisch_slugs
SELECT id, slug FROM stammtische ORDER BY id;

-- name: load_log
SELECT game_id, seq, kind, body, recorded_at FROM game_log
WHERE game_id = %(game_id)s ORDER BY seq;

-- A taken (game, seq) inserts nothing and returns no row (the transaction goes on)
-- name: append_log
INSERT INTO game_log (game_id, seq, kind, body, recorded_at)
VALUES (%(game_id)s, %(seq)s, %(kind)s, %(body)s, %(recorded_at)s)
ON CONFLICT (game_id, seq) DO NOTHING
RETURNING seq;

-- name: append_log_many
INSERT INTO game_log (game_id, seq, kind, body, recorded_at)
VALUES (%(game_id)s, %(seq)s, %(kind)s, %(body)s, %(recorded_at)s);

-- name: mark_game
INSERT INTO stats_stale (stammtisch_id, version)
SELECT stammtisch_id, 1 FROM games WHERE id = %(game_id)s
ON CONFLICT (stammtisch_id) DO UPDATE SET version = stats_stale.version + 1;

-- Responses of idempotent writes (migrations/0002_idempotency.sql)
-- name: get_response
SELECT stammtisch_id, key_hash, fingerprint, status, content_type, body, created_at
FROM idempotency_keys WHERE stammtisch_id = %(stammtisch_id)s AND key_hash = %(key_hash)s;

-- name: insert_response
INSERT INTO idempotency_keys (stammtisch_id, key_hash, fingerprint, status, content_type, body,
                              created_at)
VALUES (%(stammtisch_id)s, %(key_hash)s, %(fingerprint)s, %(status)s, %(content_type)s,
        %(body)s, %(created_at)s)
ON CONFLICT (stammtisch_id, key_hash) DO NOTHING
RETURNING 1;

-- name: purge_responses
DELETE FROM idempotency_keys WHERE created_at < %(before)s;

-- The version of a game: its last log entry's sequence number (an index look-up)
-- name: game_version
SELECT seq FROM game_log WHERE game_id = %(game_id)s ORDER BY seq DESC LIMIT 1;

-- Rate limits (migrations/0007_rate_limits.sql): take one token, in one statement (the
-- expressions of the UPDATE see the row before it: refilled = tokens + elapsed × rate, capped)
-- name: take_token
INSERT INTO rate_limits AS r (who, tokens, updated_at, granted)
VALUES (%(who)s, %(burst)s - 1.0, %(now)s, 1)
ON CONFLICT (who) DO UPDATE SET
    tokens = least(%(burst)s, r.tokens + greatest(0.0, %(now)s - r.updated_at) * %(rate)s)
             - (least(%(burst)s, r.tokens + greatest(0.0, %(now)s - r.updated_at) * %(rate)s)
                >= 1.0)::int,
    granted = (least(%(burst)s, r.tokens + greatest(0.0, %(now)s - r.updated_at) * %(rate)s)
               >= 1.0)::int,
    updated_at = greatest(r.updated_at, %(now)s)
RETURNING tokens, granted;

-- name: purge_tokens
DELETE FROM rate_limits WHERE updated_at < %(before)s;

-- Failed logins (migrations/0011_login_failures.sql)
-- name: note_failure
INSERT INTO login_failures AS f (who, failures, last_at) VALUES (%(who)s, 1, %(now)s)
ON CONFLICT (who) DO UPDATE SET failures = f.failures + 1, last_at = greatest(f.last_at, %(now)s)
RETURNING failures, last_at;

-- name: failures
SELECT failures, last_at FROM login_failures WHERE who = %(who)s;

-- name: clear_failures
DELETE FROM login_failures WHERE who = %(who)s;
