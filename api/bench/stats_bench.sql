-- Statements of the statistics benchmark (api/bench/stats_bench.py). Stammtisch 1 holds the
-- simulated pool: one game per week. Every other Stammtisch k (0-based, k ≥ 1) replays pool
-- games in another order on the same dates, with its own players: its game of week w is pool
-- game (w + 37k) mod weeks, and pool player i (1..8) becomes player k·8 + (i − 1 + k) mod 8 + 1,
-- named „Spieler (i − 1 + k) mod 8 + 1“.
-- Game ids: $interleaved false gives each Stammtisch a block of ids (k · weeks + w + 1: as after
-- importing its history); true interleaves them by week (w · n + k + 1: as when every Stammtisch
-- records live, so a Stammtisch-year is spread over a year of everybody's rows).

-- name: players
INSERT INTO players
SELECT k * 8 + i + 1, k + 1, 'Spieler ' || CAST(i + 1 AS VARCHAR), false,
       TIMESTAMP '2016-01-01', NULL
FROM range(0, $n) AS s(k), range(0, 8) AS t(i)
WHERE k > 0;

-- name: stammtische
INSERT INTO stammtische
SELECT k + 1, 'stammtisch-' || CAST(k + 1 AS VARCHAR), 'Stammtisch ' || CAST(k + 1 AS VARCHAR),
       '{"preset": "standard", "overrides": {}}', false, 'x', TIMESTAMP '2016-01-01'
FROM range(1, $n) AS s(k);

-- name: plan
CREATE TEMP TABLE plan AS
SELECT k, w,
       CASE WHEN $interleaved THEN w * $n + k + 1 ELSE k * $weeks + w + 1 END AS game_id,
       CASE WHEN $interleaved THEN ((w + 37 * k) % $weeks) * $n + 1
            ELSE (w + 37 * k) % $weeks + 1 END AS src_id,
       CASE WHEN $interleaved THEN w * $n + 1 ELSE w + 1 END AS week_id
FROM range(1, $n) AS s(k), range(0, $weeks) AS t(w);

-- name: macros
CREATE OR REPLACE TEMP MACRO pid(k, id) AS
    CASE WHEN id IS NULL THEN NULL ELSE k * 8 + (id - 1 + k) % 8 + 1 END;
CREATE OR REPLACE TEMP MACRO pname(k, id, name) AS
    CASE WHEN id IS NULL THEN name ELSE 'Spieler ' || CAST((id - 1 + k) % 8 + 1 AS VARCHAR) END;

-- name: games
INSERT INTO games BY NAME
SELECT s.* REPLACE (p.game_id AS id, p.k + 1 AS stammtisch_id, wk.played_at AS played_at,
                    wk.played_at_utc AS played_at_utc, wk.played_local AS played_local,
                    wk.year AS year)
FROM plan p JOIN games s ON s.id = p.src_id JOIN games wk ON wk.id = p.week_id
ORDER BY p.game_id;

-- name: game_players
INSERT INTO game_players BY NAME
SELECT s.* REPLACE (p.game_id AS game_id, pid(p.k, s.player_id) AS player_id,
                    pname(p.k, s.player_id, s.name) AS name)
FROM plan p JOIN game_players s ON s.game_id = p.src_id
ORDER BY p.game_id, s.seat;

-- name: game_facts
INSERT INTO game_facts BY NAME
SELECT s.* REPLACE (p.game_id AS game_id, pid(p.k, s.loser_id) AS loser_id,
                    pname(p.k, s.loser_id, s.loser) AS loser,
                    pid(p.k, s.finalist1_id) AS finalist1_id,
                    pid(p.k, s.finalist2_id) AS finalist2_id)
FROM plan p JOIN game_facts s ON s.game_id = p.src_id
ORDER BY p.game_id;

-- name: turn_facts
INSERT INTO turn_facts BY NAME
SELECT s.* REPLACE (p.game_id AS game_id, pid(p.k, s.player_id) AS player_id,
                    pname(p.k, s.player_id, s.player) AS player)
FROM plan p JOIN turn_facts s ON s.game_id = p.src_id
ORDER BY p.game_id, s.turn_no;

-- name: round_facts
INSERT INTO round_facts BY NAME
SELECT s.* REPLACE (p.game_id AS game_id,
                    pid(p.k, s.starter_id) AS starter_id, pname(p.k, s.starter_id, s.starter) AS starter,
                    pid(p.k, s.best_id) AS best_id, pname(p.k, s.best_id, s.best) AS best,
                    pid(p.k, s.worst_id) AS worst_id, pname(p.k, s.worst_id, s.worst) AS worst,
                    pid(p.k, s.source_player_id) AS source_player_id,
                    pname(p.k, s.source_player_id, s.source) AS source)
FROM plan p JOIN round_facts s ON s.game_id = p.src_id
ORDER BY p.game_id, s.round_no;

-- name: deckel_moves
INSERT INTO deckel_moves BY NAME
SELECT s.* REPLACE (p.game_id AS game_id,
                    pid(p.k, s.receiver_id) AS receiver_id,
                    pname(p.k, s.receiver_id, s.receiver) AS receiver,
                    pid(p.k, s.source_player_id) AS source_player_id,
                    pname(p.k, s.source_player_id, s.source) AS source)
FROM plan p JOIN deckel_moves s ON s.game_id = p.src_id
ORDER BY p.game_id, s.move_no;

-- name: half_facts
INSERT INTO half_facts BY NAME
SELECT s.* REPLACE (p.game_id AS game_id, pid(p.k, s.loser_id) AS loser_id,
                    pname(p.k, s.loser_id, s.loser) AS loser)
FROM plan p JOIN half_facts s ON s.game_id = p.src_id
ORDER BY p.game_id;

-- name: player_game_facts
INSERT INTO player_game_facts BY NAME
SELECT s.* REPLACE (p.game_id AS game_id, pid(p.k, s.player_id) AS player_id,
                    p.k + 1 AS stammtisch_id, wk.year AS year, wk.played_local AS played_local)
FROM plan p JOIN player_game_facts s ON s.game_id = p.src_id JOIN games wk ON wk.id = p.week_id
ORDER BY p.game_id, s.player_id;

-- name: count_turns
SELECT count(*) FROM turn_facts;

-- name: random_years
SELECT g.stammtisch_id, g.year
FROM games g
GROUP BY g.stammtisch_id, g.year
ORDER BY hash(g.stammtisch_id * 10000 + g.year)
LIMIT $limit;
