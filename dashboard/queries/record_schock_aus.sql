-- Record: most Schock aus one player threw in one finished game, the $limit top rows per
-- Stammtisch and period (the calendar year at the table, 0: all time). All time ranks the
-- years' top rows.
WITH yearly AS (
    SELECT s.stammtisch_id, s.year, s.game_id, s.played_local, s.player_id, pl.name,
           s.schock_aus,
           row_number() OVER (
               PARTITION BY s.stammtisch_id, s.year
               ORDER BY s.schock_aus DESC, s.played_local, s.game_id, pl.name, s.player_id
           ) AS place
    FROM player_game_facts s
    JOIN players pl ON pl.id = s.player_id
    WHERE s.schock_aus > 0
),
top AS (
    SELECT y.*, y.year AS period FROM yearly y WHERE place <= $limit
),
ever AS (
    SELECT stammtisch_id, 0 AS period, game_id, played_local, player_id, name, schock_aus,
           row_number() OVER (
               PARTITION BY stammtisch_id
               ORDER BY schock_aus DESC, played_local, game_id, name, player_id) AS place
    FROM top
),
both_ AS (
    SELECT stammtisch_id, period, game_id, played_local, player_id, name, schock_aus, place
    FROM top
    UNION ALL
    SELECT stammtisch_id, period, game_id, played_local, player_id, name, schock_aus, place
    FROM ever WHERE place <= $limit
)
SELECT stammtisch_id, period, game_id, played_local, player_id, name, schock_aus
FROM both_
ORDER BY stammtisch_id, period, place
