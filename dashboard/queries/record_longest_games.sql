-- Record: the longest finished games of the period by rounds played (repeated rounds count).
SELECT g.id AS game_id, g.played_local, f.rounds, f.turns, pl.name AS loser
FROM games g
JOIN game_facts f ON f.game_id = g.id
JOIN players pl ON pl.id = f.loser_id
WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
  AND f.status = 'finished'
ORDER BY f.rounds DESC, f.turns DESC, g.played_local, g.id
LIMIT $limit
