-- Games lost per Stammtisch, year (the calendar year at the table), month (at the table,
-- 'YYYY-MM') and player; months without a loss are absent. All time is every year's rows in
-- turn (dashboard/stats.py YEARLY_ONLY), so only the years are computed here.
WITH lost AS (
    SELECT g.stammtisch_id, g.year, substr(CAST(g.played_local AS VARCHAR), 1, 7) AS month,
           f.loser_id AS player_id, count(*) AS games_lost
    FROM games g
    JOIN game_facts f ON f.game_id = g.id
    WHERE f.status = 'finished'
    GROUP BY g.stammtisch_id, g.year, month, f.loser_id
)
SELECT p.stammtisch_id, p.year AS period, p.month, p.player_id, pl.name, p.games_lost
FROM lost p
JOIN players pl ON pl.id = p.player_id
ORDER BY p.stammtisch_id, p.year, p.month, pl.name
