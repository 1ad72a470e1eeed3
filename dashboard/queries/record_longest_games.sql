-- Record: the longest finished games of the period by rounds played (repeated rounds count),
-- then by turns. The rounds of a game sum up its halves and Finale (half_facts).
WITH g AS (
    SELECT g.id AS game_id, g.played_local, f.loser_id,
           (SELECT sum(h.rounds) FROM half_facts h WHERE h.game_id = g.id) AS rounds
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
turns AS (
    SELECT game_id, sum(turns) AS turns
    FROM player_game_facts
    WHERE stammtisch_id = $stammtisch_id AND ($year IS NULL OR year = $year)
    GROUP BY game_id
)
SELECT g.game_id, g.played_local, g.rounds, coalesce(turns.turns, 0) AS turns,
       pl.name AS loser
FROM g
JOIN players pl ON pl.id = g.loser_id
LEFT JOIN turns ON turns.game_id = g.game_id
ORDER BY g.rounds DESC, turns DESC, g.played_local, g.game_id
LIMIT $limit
