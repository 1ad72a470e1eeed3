-- 0003: one summary row per player and finished game, so that the statistics of a
-- Stammtisch-year never scan the big per-turn tables (turn_facts, round_facts, deckel_moves).
-- The rows are derived from the other facts by the view player_game_summary, the single
-- definition of every per-player-and-game figure. The repository refreshes a game's rows in
-- the same transaction as its facts whenever the game is (or was) finished; bulk loads and
-- snapshots insert the rows of the games they load. Rebuild rewrites them with the facts.
CREATE TABLE player_game_facts (
    game_id          INTEGER NOT NULL,
    player_id        INTEGER NOT NULL,
    -- copied from games, so that a Stammtisch-year is one filter on this table
    stammtisch_id    INTEGER NOT NULL,
    year             INTEGER NOT NULL,
    played_local     TIMESTAMP NOT NULL,
    lost             INTEGER NOT NULL,  -- 1: lost the game (pays)
    finalist         INTEGER NOT NULL,  -- 1: played the Finale
    finale_lost      INTEGER NOT NULL,
    blattschuss      INTEGER NOT NULL,  -- 1: lost both halves
    halves_lost      INTEGER NOT NULL,  -- Hälfte 1 and 2 (the Finale is not a half)
    deckel           INTEGER NOT NULL,  -- received in the whole game (rounds and penalties)
    deckel_half1     INTEGER NOT NULL,
    deckel_half2     INTEGER NOT NULL,
    deckel_finale    INTEGER NOT NULL,
    turns            INTEGER NOT NULL,
    schock_aus       INTEGER NOT NULL,  -- Schock aus thrown
    -- single throws nobody chose to keep (blind, or forced by a round limit of one for a
    -- player who did not open): the only results comparable with the one-throw probabilities;
    -- categories read from the dice in the default order
    fair_schock_aus  INTEGER NOT NULL,
    fair_schock      INTEGER NOT NULL,
    fair_general     INTEGER NOT NULL,
    fair_strasse     INTEGER NOT NULL,
    fair_zahl        INTEGER NOT NULL,
    PRIMARY KEY (game_id, player_id)
);

CREATE VIEW player_game_summary AS
WITH finished AS (
    SELECT game_id, loser_id, blattschuss, finalist1_id, finalist2_id
    FROM game_facts
    WHERE status = 'finished'
),
halves AS (
    SELECT game_id, loser_id AS player_id, count(*) AS halves_lost
    FROM half_facts
    WHERE half IN ('half1', 'half2')
    GROUP BY game_id, loser_id
),
deckel AS (
    SELECT game_id, receiver_id AS player_id,
           sum(amount) AS deckel,
           sum(CASE WHEN half = 'half1' THEN amount ELSE 0 END) AS deckel_half1,
           sum(CASE WHEN half = 'half2' THEN amount ELSE 0 END) AS deckel_half2,
           sum(CASE WHEN half = 'finale' THEN amount ELSE 0 END) AS deckel_finale
    FROM deckel_moves
    GROUP BY game_id, receiver_id
),
turns AS (
    SELECT t.game_id, t.player_id, t.dice, t.category,
           t.throws = 1 AND t.hand AND length(t.dice) = 5
               AND (t.blind OR (r.throw_limit = 1 AND r.starter_id <> t.player_id)) AS fair
    FROM turn_facts t
    JOIN round_facts r ON r.game_id = t.game_id AND r.round_no = t.round_no
),
thrown AS (
    SELECT game_id, player_id,
           count(*) AS turns,
           sum(CASE WHEN category = 'schock_aus' THEN 1 ELSE 0 END) AS schock_aus,
           sum(CASE WHEN fair AND dice = '1-1-1' THEN 1 ELSE 0 END) AS fair_schock_aus,
           sum(CASE WHEN fair AND dice <> '1-1-1' AND substr(dice, 1, 3) = '1-1'
                    THEN 1 ELSE 0 END) AS fair_schock,
           sum(CASE WHEN fair AND dice <> '1-1-1' AND substr(dice, 1, 1) = substr(dice, 3, 1)
                         AND substr(dice, 3, 1) = substr(dice, 5, 1)
                    THEN 1 ELSE 0 END) AS fair_general,
           sum(CASE WHEN fair AND dice IN ('1-2-3', '2-3-4', '3-4-5', '4-5-6')
                    THEN 1 ELSE 0 END) AS fair_strasse,
           sum(CASE WHEN fair THEN 1 ELSE 0 END) AS fair
    FROM turns
    GROUP BY game_id, player_id
)
SELECT p.game_id, p.player_id, g.stammtisch_id, g.year, g.played_local,
       CASE WHEN f.loser_id = p.player_id THEN 1 ELSE 0 END AS lost,
       CASE WHEN p.player_id IN (f.finalist1_id, f.finalist2_id) THEN 1 ELSE 0 END AS finalist,
       CASE WHEN p.player_id IN (f.finalist1_id, f.finalist2_id) AND f.loser_id = p.player_id
            THEN 1 ELSE 0 END AS finale_lost,
       CASE WHEN f.blattschuss AND f.loser_id = p.player_id THEN 1 ELSE 0 END AS blattschuss,
       coalesce(h.halves_lost, 0) AS halves_lost,
       coalesce(d.deckel, 0) AS deckel,
       coalesce(d.deckel_half1, 0) AS deckel_half1,
       coalesce(d.deckel_half2, 0) AS deckel_half2,
       coalesce(d.deckel_finale, 0) AS deckel_finale,
       coalesce(t.turns, 0) AS turns,
       coalesce(t.schock_aus, 0) AS schock_aus,
       coalesce(t.fair_schock_aus, 0) AS fair_schock_aus,
       coalesce(t.fair_schock, 0) AS fair_schock,
       coalesce(t.fair_general, 0) AS fair_general,
       coalesce(t.fair_strasse, 0) AS fair_strasse,
       coalesce(t.fair, 0) - coalesce(t.fair_schock_aus, 0) - coalesce(t.fair_schock, 0)
           - coalesce(t.fair_general, 0) - coalesce(t.fair_strasse, 0) AS fair_zahl
FROM game_players p
JOIN finished f ON f.game_id = p.game_id
JOIN games g ON g.id = p.game_id
LEFT JOIN halves h ON h.game_id = p.game_id AND h.player_id = p.player_id
LEFT JOIN deckel d ON d.game_id = p.game_id AND d.player_id = p.player_id
LEFT JOIN thrown t ON t.game_id = p.game_id AND t.player_id = p.player_id;

INSERT INTO player_game_facts SELECT * FROM player_game_summary;
