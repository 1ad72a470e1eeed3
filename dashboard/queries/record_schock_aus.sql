-- Record: most Schock aus one player threw in one finished game of the period.
WITH g AS (
    SELECT g.id AS game_id, g.played_local
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
)
SELECT g.game_id, g.played_local, s.player_id, pl.name, s.schock_aus
FROM g
JOIN player_game_facts s ON s.game_id = g.game_id
JOIN players pl ON pl.id = s.player_id
WHERE s.schock_aus > 0
ORDER BY s.schock_aus DESC, g.played_local, g.game_id, pl.name
LIMIT $limit
