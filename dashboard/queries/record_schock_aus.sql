-- Record: most Schock aus one player threw in one finished game of the period.
SELECT s.game_id, s.played_local, s.player_id, pl.name, s.schock_aus
FROM player_game_facts s
JOIN players pl ON pl.id = s.player_id
WHERE s.stammtisch_id = $stammtisch_id AND ($year IS NULL OR s.year = $year)
  AND s.schock_aus > 0
ORDER BY s.schock_aus DESC, s.played_local, s.game_id, pl.name
LIMIT $limit
