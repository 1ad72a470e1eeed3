-- Longest run of consecutive finished games (in the order played) that a player sat at
-- without losing, within the period. Games the player missed do not break a run.
WITH g AS (
    SELECT g.id AS game_id, g.played_local, f.loser_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
marked AS (
    SELECT p.player_id, g.game_id, g.played_local,
           CASE WHEN g.loser_id = p.player_id THEN 1 ELSE 0 END AS lost
    FROM g JOIN game_players p ON p.game_id = g.game_id
),
numbered AS (
    -- every loss opens a new group; the games after it (until the next loss) are one run
    SELECT player_id, lost,
           sum(lost) OVER (PARTITION BY player_id ORDER BY played_local, game_id
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS grp
    FROM marked
),
runs AS (
    SELECT player_id, grp, sum(1 - lost) AS run
    FROM numbered
    GROUP BY player_id, grp
)
SELECT runs.player_id, pl.name, max(runs.run) AS longest_without_loss
FROM runs JOIN players pl ON pl.id = runs.player_id
GROUP BY runs.player_id, pl.name
ORDER BY longest_without_loss DESC, pl.name
