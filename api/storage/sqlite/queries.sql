-- Named queries of the SQLite adapter. Parameters are bound (:name), never formatted in.

-- name: insert_stammtisch
INSERT INTO stammtische (slug, name, rules, private, token_hash, created_at)
VALUES (:slug, :name, :rules, :private, :token_hash, :created_at)
RETURNING id;

-- name: get_stammtisch
SELECT id, slug, name, rules, private, token_hash, created_at
FROM stammtische WHERE slug = :slug;

-- name: update_stammtisch
UPDATE stammtische SET name = :name, rules = :rules, private = :private WHERE id = :id;

-- name: insert_player
INSERT INTO players (stammtisch_id, name, retired, created_at)
VALUES (:stammtisch_id, :name, 0, :created_at)
RETURNING id;

-- name: list_players
SELECT id, stammtisch_id, name, retired, created_at, retired_at
FROM players WHERE stammtisch_id = :stammtisch_id ORDER BY id;

-- name: update_player
UPDATE players SET name = :name, retired = :retired, retired_at = :retired_at WHERE id = :id;

-- name: insert_game
INSERT INTO games (stammtisch_id, header, rules, options, played_at, played_at_utc,
                   played_local, year, source, created_at)
VALUES (:stammtisch_id, :header, :rules, :options, :played_at, :played_at_utc,
        :played_local, :year, :source, :created_at)
RETURNING id;

-- name: insert_game_player
INSERT INTO game_players (game_id, seat, player_id, name, starter)
VALUES (:game_id, :seat, :player_id, :name, :starter);

-- name: get_game
SELECT g.id, g.stammtisch_id, g.header, g.rules, g.options, g.played_at, g.played_at_utc,
       g.year, g.source, g.created_at,
       CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END,
       coalesce(f.phase, 'half1'), f.loser, g.played_local, g.number
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.id = :game_id;

-- name: game_players
SELECT game_id, seat, player_id, name, starter
FROM game_players WHERE game_id IN (SELECT value FROM json_each(:game_ids))
ORDER BY game_id, seat;

-- name: list_games
SELECT g.id, g.stammtisch_id, g.header, g.rules, g.options, g.played_at, g.played_at_utc,
       g.year, g.source, g.created_at,
       CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END,
       coalesce(f.phase, 'half1'), f.loser, g.played_local, g.number
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = :stammtisch_id
  AND (:year IS NULL OR g.year = :year)
  AND (:status IS NULL OR CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END = :status)
  AND (:player_id IS NULL OR EXISTS (
        SELECT 1 FROM game_players p WHERE p.game_id = g.id AND p.player_id = :player_id))
ORDER BY g.played_at_utc DESC, g.id DESC
LIMIT :limit OFFSET :offset;

-- name: count_games
SELECT count(*)
FROM games g LEFT JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = :stammtisch_id
  AND (:year IS NULL OR g.year = :year)
  AND (:status IS NULL OR CASE WHEN g.abandoned_at IS NULL THEN coalesce(f.status, 'running') ELSE 'abandoned' END = :status)
  AND (:player_id IS NULL OR EXISTS (
        SELECT 1 FROM game_players p WHERE p.game_id = g.id AND p.player_id = :player_id));

-- name: game_ids
SELECT id FROM games ORDER BY id;

-- name: stammtisch_slugs
SELECT id, slug FROM stammtische ORDER BY id;

-- name: load_log
SELECT game_id, seq, kind, body, recorded_at FROM game_log WHERE game_id = :game_id ORDER BY seq;

-- name: append_log
INSERT INTO game_log (game_id, seq, kind, body, recorded_at)
VALUES (:game_id, :seq, :kind, :body, :recorded_at);

-- name: delete_turn_facts
DELETE FROM turn_facts WHERE game_id = :game_id;

-- name: delete_round_facts
DELETE FROM round_facts WHERE game_id = :game_id;

-- name: delete_deckel_moves
DELETE FROM deckel_moves WHERE game_id = :game_id;

-- name: delete_half_facts
DELETE FROM half_facts WHERE game_id = :game_id;

-- name: delete_player_game_facts
DELETE FROM player_game_facts WHERE game_id = :game_id;

-- name: read_game_facts
SELECT * FROM game_facts WHERE game_id = :game_id;

-- name: read_turn_facts
SELECT * FROM turn_facts WHERE game_id = :game_id ORDER BY turn_no;

-- name: read_round_facts
SELECT * FROM round_facts WHERE game_id = :game_id ORDER BY round_no;

-- name: read_deckel_moves
SELECT * FROM deckel_moves WHERE game_id = :game_id ORDER BY move_no;

-- name: read_half_facts
SELECT * FROM half_facts WHERE game_id = :game_id ORDER BY half;

-- name: read_player_game_facts
SELECT * FROM player_game_facts WHERE game_id = :game_id ORDER BY player_id;

-- Responses of idempotent writes (migrations/0002_idempotency.sql)
-- name: get_response
SELECT stammtisch_id, key_hash, fingerprint, status, content_type, body, created_at
FROM idempotency_keys WHERE stammtisch_id = :stammtisch_id AND key_hash = :key_hash;

-- name: insert_response
INSERT INTO idempotency_keys (stammtisch_id, key_hash, fingerprint, status, content_type, body,
                              created_at)
VALUES (:stammtisch_id, :key_hash, :fingerprint, :status, :content_type, :body, :created_at);

-- name: purge_responses
DELETE FROM idempotency_keys WHERE created_at < :before;

-- The version of a game: its last log entry's sequence number (an index look-up)
-- name: game_version
SELECT seq FROM game_log WHERE game_id = :game_id ORDER BY seq DESC LIMIT 1;

-- Rate limits (migrations/0007_rate_limits.sql): take one token, in one statement (the
-- expressions of the UPDATE see the row before it: refilled = tokens + elapsed × rate, capped)
-- name: take_token
INSERT INTO rate_limits (who, tokens, updated_at, granted)
VALUES (:who, :burst - 1.0, :now, 1)
ON CONFLICT (who) DO UPDATE SET
    tokens = min(:burst, tokens + max(0.0, :now - updated_at) * :rate)
             - (min(:burst, tokens + max(0.0, :now - updated_at) * :rate) >= 1.0),
    granted = min(:burst, tokens + max(0.0, :now - updated_at) * :rate) >= 1.0,
    updated_at = max(updated_at, :now)
RETURNING tokens, granted;

-- name: purge_tokens
DELETE FROM rate_limits WHERE updated_at < :before;

-- name: note_failure
INSERT INTO login_failures (who, failures, last_at) VALUES (:who, 1, :now)
ON CONFLICT (who) DO UPDATE SET failures = failures + 1, last_at = max(last_at, :now)
RETURNING failures, last_at;

-- name: failures
SELECT failures, last_at FROM login_failures WHERE who = :who;

-- name: clear_failures
DELETE FROM login_failures WHERE who = :who;
