-- Attendance per Stammtisch and calendar year (at the table): finished games each player sat
-- at, beside the year's games. All time is every year's rows in turn (dashboard/stats.py
-- YEARLY_ONLY), so only the years are computed here.
WITH per_year AS (
    SELECT stammtisch_id, year, count(DISTINCT game_id) AS games
    FROM player_game_facts GROUP BY stammtisch_id, year
),
seats AS (
    SELECT stammtisch_id, year, player_id, count(*) AS games_played
    FROM player_game_facts GROUP BY stammtisch_id, year, player_id
)
SELECT s.stammtisch_id, s.year AS period, s.year, s.player_id, pl.name, s.games_played,
       per_year.games
FROM seats s
JOIN per_year ON per_year.stammtisch_id = s.stammtisch_id AND per_year.year = s.year
JOIN players pl ON pl.id = s.player_id
ORDER BY s.stammtisch_id, s.year, pl.name
