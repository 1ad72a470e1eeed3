-- Record: most Deckel one player received in one half (Hälfte 1, 2 or the Finale) of a finished
-- game of the period, counting every Deckel that came to them (rounds and penalties).
WITH seats AS (
    SELECT * FROM player_game_facts
    WHERE stammtisch_id = $stammtisch_id AND ($year IS NULL OR year = $year)
),
halves AS (
    SELECT game_id, played_local, 'half1' AS half, player_id, deckel_half1 AS deckel FROM seats
    UNION ALL
    SELECT game_id, played_local, 'half2', player_id, deckel_half2 FROM seats
    UNION ALL
    SELECT game_id, played_local, 'finale', player_id, deckel_finale FROM seats
)
SELECT h.game_id, h.played_local, h.half, h.player_id, pl.name, h.deckel
FROM halves h
JOIN players pl ON pl.id = h.player_id
WHERE h.deckel > 0
ORDER BY h.deckel DESC, h.played_local, h.game_id, h.half, pl.name
LIMIT $limit
