-- Attendance per Stammtisch, period (the calendar year at the table, 0: all time) and calendar
-- year: finished games each player sat at, beside the year's games. A year's rows belong to its
-- own period and to all time.
WITH per_year AS (
    SELECT stammtisch_id, year, count(DISTINCT game_id) AS games
    FROM player_game_facts GROUP BY stammtisch_id, year
),
seats AS (
    SELECT stammtisch_id, year, player_id, count(*) AS games_played
    FROM player_game_facts GROUP BY stammtisch_id, year, player_id
),
rows_ AS (
    SELECT s.stammtisch_id, s.year, s.player_id, pl.name, s.games_played, per_year.games
    FROM seats s
    JOIN per_year ON per_year.stammtisch_id = s.stammtisch_id AND per_year.year = s.year
    JOIN players pl ON pl.id = s.player_id
),
periods AS (
    SELECT rows_.*, rows_.year AS period FROM rows_
    UNION ALL
    SELECT rows_.*, 0 AS period FROM rows_
)
SELECT stammtisch_id, period, year, player_id, name, games_played, games
FROM periods
ORDER BY stammtisch_id, period, year, name
