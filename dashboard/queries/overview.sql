-- Totals of one Stammtisch in a period ($year NULL: all time); finished games only.
-- Turns and players come from the per-player summary (player_game_facts), not the turn table;
-- rounds from the halves (half_facts: each half and the Finale count their rounds).
WITH g AS (
    SELECT g.id AS game_id, g.played_local, f.blattschuss, f.finalist1_id,
           (SELECT sum(h.rounds) FROM half_facts h WHERE h.game_id = g.id) AS rounds
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
seats AS (
    SELECT player_id, turns FROM player_game_facts
    WHERE stammtisch_id = $stammtisch_id AND ($year IS NULL OR year = $year)
)
SELECT count(*) AS games,
       coalesce(sum(g.rounds), 0) AS rounds,
       (SELECT coalesce(sum(seats.turns), 0) FROM seats) AS turns,
       coalesce(sum(CASE WHEN g.blattschuss THEN 1 ELSE 0 END), 0) AS blattschuss,
       coalesce(sum(CASE WHEN g.finalist1_id IS NOT NULL THEN 1 ELSE 0 END), 0) AS finals,
       min(g.played_local) AS first_game,
       max(g.played_local) AS last_game,
       (SELECT count(DISTINCT seats.player_id) FROM seats) AS players
FROM g
