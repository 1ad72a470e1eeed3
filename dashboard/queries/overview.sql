-- Totals per Stammtisch and period (period: the calendar year at the table, 0: all time);
-- finished games only. Every game counts twice: for its year and for all time.
-- Turns and players come from the per-player summary (player_game_facts), not the turn table;
-- rounds from the halves (half_facts: each half and the Finale count their rounds).
WITH rounds AS (
    SELECT game_id, sum(rounds) AS rounds FROM half_facts GROUP BY game_id
),
g AS (
    SELECT g.stammtisch_id, g.year, g.played_local, f.blattschuss, f.finalist1_id, r.rounds
    FROM games g
    JOIN game_facts f ON f.game_id = g.id
    LEFT JOIN rounds r ON r.game_id = g.id
    WHERE f.status = 'finished'
),
gp AS (
    SELECT g.*, g.year AS period FROM g UNION ALL SELECT g.*, 0 AS period FROM g
),
seats AS (
    SELECT stammtisch_id, year, player_id, sum(turns) AS turns
    FROM player_game_facts GROUP BY stammtisch_id, year, player_id
),
per_seat AS (
    -- the years from the summary rows, all time from the years (each row is read once)
    SELECT stammtisch_id, year AS period, sum(turns) AS turns, count(*) AS players
    FROM seats GROUP BY stammtisch_id, year
    UNION ALL
    SELECT stammtisch_id, 0, sum(turns), count(DISTINCT player_id)
    FROM seats GROUP BY stammtisch_id
)
SELECT gp.stammtisch_id, gp.period,
       count(*) AS games,
       coalesce(sum(gp.rounds), 0) AS rounds,
       coalesce(per_seat.turns, 0) AS turns,
       coalesce(sum(CASE WHEN gp.blattschuss THEN 1 ELSE 0 END), 0) AS blattschuss,
       coalesce(sum(CASE WHEN gp.finalist1_id IS NOT NULL THEN 1 ELSE 0 END), 0) AS finals,
       min(gp.played_local) AS first_game,
       max(gp.played_local) AS last_game,
       coalesce(per_seat.players, 0) AS players
FROM gp
LEFT JOIN per_seat ON per_seat.stammtisch_id = gp.stammtisch_id
                  AND per_seat.period = gp.period
GROUP BY gp.stammtisch_id, gp.period, per_seat.turns, per_seat.players
ORDER BY gp.stammtisch_id, gp.period
