-- Games lost per month (at the table, 'YYYY-MM') and player; months without a loss are absent.
SELECT substr(CAST(g.played_local AS VARCHAR), 1, 7) AS month,
       f.loser_id AS player_id, pl.name, count(*) AS games_lost
FROM games g
JOIN game_facts f ON f.game_id = g.id
JOIN players pl ON pl.id = f.loser_id
WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
  AND f.status = 'finished'
GROUP BY month, f.loser_id, pl.name
ORDER BY month, pl.name
