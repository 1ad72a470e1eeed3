-- Record: most Deckel one player received in one half (Hälfte 1, 2 or the Finale) of a finished
-- game of the period, counting every Deckel that came to them (rounds and penalties).
WITH g AS (
    SELECT g.id AS game_id, g.played_local
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
seats AS (
    SELECT s.* FROM g JOIN player_game_facts s ON s.game_id = g.game_id
),
halves AS (
    SELECT game_id, 'half1' AS half, player_id, deckel_half1 AS deckel FROM seats
    UNION ALL
    SELECT game_id, 'half2', player_id, deckel_half2 FROM seats
    UNION ALL
    SELECT game_id, 'finale', player_id, deckel_finale FROM seats
)
SELECT g.game_id, g.played_local, h.half, h.player_id, pl.name, h.deckel
FROM halves h
JOIN g ON g.game_id = h.game_id
JOIN players pl ON pl.id = h.player_id
WHERE h.deckel > 0
ORDER BY h.deckel DESC, g.played_local, g.game_id, h.half, pl.name
LIMIT $limit
