-- Totals of one Stammtisch in a period ($year NULL: all time); finished games only.
WITH g AS (
    SELECT g.id AS game_id, g.played_local, f.rounds, f.blattschuss, f.finalist1_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
)
SELECT count(*) AS games,
       coalesce(sum(g.rounds), 0) AS rounds,
       (SELECT count(*) FROM g JOIN turn_facts t ON t.game_id = g.game_id) AS turns,
       coalesce(sum(CASE WHEN g.blattschuss THEN 1 ELSE 0 END), 0) AS blattschuss,
       coalesce(sum(CASE WHEN g.finalist1_id IS NOT NULL THEN 1 ELSE 0 END), 0) AS finals,
       min(g.played_local) AS first_game,
       max(g.played_local) AS last_game,
       (SELECT count(DISTINCT p.player_id) FROM g JOIN game_players p ON p.game_id = g.game_id)
           AS players
FROM g
