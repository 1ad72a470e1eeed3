-- Record: the $limit longest finished games per Stammtisch and period (the calendar year at
-- the table, 0: all time) by rounds played (repeated rounds count), then by turns. The rounds
-- of a game sum up its halves and Finale (half_facts). All time ranks the years' top rows (a
-- game in the all-time top is in its year's top).
WITH rounds AS (
    SELECT game_id, sum(rounds) AS rounds FROM half_facts GROUP BY game_id
),
turns AS (
    SELECT game_id, sum(turns) AS turns FROM player_game_facts GROUP BY game_id
),
g AS (
    SELECT g.stammtisch_id, g.year, g.id AS game_id, g.played_local, r.rounds,
           coalesce(t.turns, 0) AS turns, f.loser_id
    FROM games g
    JOIN game_facts f ON f.game_id = g.id
    LEFT JOIN rounds r ON r.game_id = g.id
    LEFT JOIN turns t ON t.game_id = g.id
    WHERE f.status = 'finished'
),
yearly AS (
    SELECT g.*, row_number() OVER (
        PARTITION BY stammtisch_id, year
        ORDER BY rounds DESC, turns DESC, played_local, game_id) AS place
    FROM g
),
top AS (
    SELECT y.*, y.year AS period FROM yearly y WHERE place <= $limit
),
ever AS (
    SELECT stammtisch_id, 0 AS period, game_id, played_local, rounds, turns, loser_id,
           row_number() OVER (
               PARTITION BY stammtisch_id
               ORDER BY rounds DESC, turns DESC, played_local, game_id) AS place
    FROM top
),
both_ AS (
    SELECT stammtisch_id, period, game_id, played_local, rounds, turns, loser_id, place FROM top
    UNION ALL
    SELECT stammtisch_id, period, game_id, played_local, rounds, turns, loser_id, place
    FROM ever WHERE place <= $limit
)
SELECT b.stammtisch_id, b.period, b.game_id, b.played_local, b.rounds, b.turns,
       pl.name AS loser
FROM both_ b
JOIN players pl ON pl.id = b.loser_id
ORDER BY b.stammtisch_id, b.period, b.place
