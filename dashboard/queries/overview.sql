-- Totals of one Stammtisch in a period ($year NULL: all time); finished games only.
SELECT count(*) AS games,
       coalesce(sum(f.rounds), 0) AS rounds,
       coalesce(sum(f.turns), 0) AS turns,
       coalesce(sum(CASE WHEN f.blattschuss THEN 1 ELSE 0 END), 0) AS blattschuss,
       coalesce(sum(CASE WHEN f.finalist1_id IS NOT NULL THEN 1 ELSE 0 END), 0) AS finals,
       min(g.played_local) AS first_game,
       max(g.played_local) AS last_game,
       (SELECT count(DISTINCT p.player_id)
        FROM game_players p JOIN games g2 ON g2.id = p.game_id
        JOIN game_facts f2 ON f2.game_id = g2.id
        WHERE g2.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g2.year = $year)
          AND f2.status = 'finished') AS players
FROM games g JOIN game_facts f ON f.game_id = g.id
WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
  AND f.status = 'finished'
