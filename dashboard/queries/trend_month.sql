-- Games lost per Stammtisch, period (the calendar year at the table, 0: all time), month (at
-- the table, 'YYYY-MM') and player; months without a loss are absent.
WITH lost AS (
    SELECT g.stammtisch_id, g.year, substr(CAST(g.played_local AS VARCHAR), 1, 7) AS month,
           f.loser_id AS player_id, count(*) AS games_lost
    FROM games g
    JOIN game_facts f ON f.game_id = g.id
    WHERE f.status = 'finished'
    GROUP BY g.stammtisch_id, g.year, month, f.loser_id
),
periods AS (
    SELECT lost.*, lost.year AS period FROM lost
    UNION ALL
    SELECT lost.*, 0 AS period FROM lost
)
SELECT p.stammtisch_id, p.period, p.month, p.player_id, pl.name, p.games_lost
FROM periods p
JOIN players pl ON pl.id = p.player_id
ORDER BY p.stammtisch_id, p.period, p.month, pl.name
