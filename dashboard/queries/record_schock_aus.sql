-- Record: most Schock aus one player threw in one finished game of the period.
WITH g AS (
    SELECT g.id AS game_id, g.played_local
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
)
SELECT g.game_id, g.played_local, t.player_id, pl.name, count(*) AS schock_aus
FROM g
JOIN turn_facts t ON t.game_id = g.game_id
JOIN players pl ON pl.id = t.player_id
WHERE t.category = 'schock_aus'
GROUP BY g.game_id, g.played_local, t.player_id, pl.name
ORDER BY schock_aus DESC, g.played_local, g.game_id, pl.name
LIMIT $limit
