-- Attendance per calendar year: finished games each player sat at, beside the year's games.
WITH g AS (
    SELECT g.id AS game_id, g.year
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
per_year AS (SELECT year, count(*) AS games FROM g GROUP BY year)
SELECT g.year, p.player_id, pl.name, count(*) AS games_played, per_year.games
FROM g
JOIN game_players p ON p.game_id = g.game_id
JOIN players pl ON pl.id = p.player_id
JOIN per_year ON per_year.year = g.year
GROUP BY g.year, p.player_id, pl.name, per_year.games
ORDER BY g.year, pl.name
