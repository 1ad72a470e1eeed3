-- An independent definition of the per-player summary (player_game_facts) in SQL, from the
-- other fact tables: the view of migration 0003, kept as the tests' oracle for
-- api/facts.summarize, which derives the rows since 0005.
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
LEFT JOIN thrown t ON t.game_id = p.game_id AND t.player_id = p.player_id
