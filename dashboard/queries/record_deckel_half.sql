-- Record: most Deckel one player received in one half (Hälfte 1, 2 or the Finale) of a finished
-- game of the period, counting every Deckel that came to them (rounds and penalties).
WITH seats AS (
    SELECT * FROM player_game_facts
    WHERE stammtisch_id = $stammtisch_id AND ($year IS NULL OR year = $year)
),
halves AS (
    -- one row per player, game and half: one pass over the seats
    SELECT s.game_id, s.played_local, h.half, s.player_id,
           CASE h.half WHEN 'half1' THEN s.deckel_half1
                       WHEN 'half2' THEN s.deckel_half2
                       ELSE s.deckel_finale END AS deckel
    FROM seats s
    CROSS JOIN (SELECT 'half1' AS half UNION ALL SELECT 'half2' UNION ALL SELECT 'finale') h
)
SELECT h.game_id, h.played_local, h.half, h.player_id, pl.name, h.deckel
FROM halves h
JOIN players pl ON pl.id = h.player_id
WHERE h.deckel > 0
ORDER BY h.deckel DESC, h.played_local, h.game_id, h.half, pl.name
LIMIT $limit
