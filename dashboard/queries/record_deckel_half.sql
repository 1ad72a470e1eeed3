-- Record: most Deckel one player received in one half (Hälfte 1, 2 or the Finale) of a finished
-- game of the period, counting every Deckel that came to them (rounds and penalties).
WITH g AS (
    SELECT g.id AS game_id, g.played_local
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
)
SELECT g.game_id, g.played_local, d.half, d.receiver_id AS player_id, pl.name,
       sum(d.amount) AS deckel
FROM g
JOIN deckel_moves d ON d.game_id = g.game_id
JOIN players pl ON pl.id = d.receiver_id
GROUP BY g.game_id, g.played_local, d.half, d.receiver_id, pl.name
ORDER BY deckel DESC, g.played_local, g.game_id, d.half, pl.name
LIMIT $limit
