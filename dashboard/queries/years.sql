-- The calendar years (at the table) in which a Stammtisch finished games, newest first.
SELECT g.year, count(*) AS games
FROM games g JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = $stammtisch_id AND f.status = 'finished'
GROUP BY g.year
ORDER BY g.year DESC
