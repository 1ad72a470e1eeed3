-- Record: most Deckel one player received in one half (Hälfte 1, 2 or the Finale) of a finished
-- game, counting every Deckel that came to them (rounds and penalties): the $limit top rows
-- per Stammtisch and period (the calendar year at the table, 0: all time). All time ranks the
-- years' top rows.
WITH most AS (
    -- each summary row's most Deckel in one half
    SELECT s.*,
           CASE WHEN deckel_half1 >= deckel_half2 AND deckel_half1 >= deckel_finale
                THEN deckel_half1
                WHEN deckel_half2 >= deckel_finale THEN deckel_half2
                ELSE deckel_finale END AS most
    FROM player_game_facts s
),
best AS (
    SELECT stammtisch_id, year, game_id, max(most) AS most
    FROM most GROUP BY stammtisch_id, year, game_id
),
bar AS (
    -- a year of at least $limit games has $limit halves (of different games) with at least
    -- the Deckel of its $limit-th best game: a half with fewer cannot be in its top rows
    SELECT stammtisch_id, year, CASE WHEN count(*) >= $limit THEN min(most) ELSE 0 END AS most
    FROM (SELECT stammtisch_id, year, most,
                 row_number() OVER (PARTITION BY stammtisch_id, year ORDER BY most DESC) AS place
          FROM best) ranked
    WHERE place <= $limit
    GROUP BY stammtisch_id, year
),
halves AS (
    -- one row per player, game and half, of the rows that can reach the year's top
    SELECT s.stammtisch_id, s.year, s.game_id, s.played_local, h.half, s.player_id,
           CASE h.half WHEN 'half1' THEN s.deckel_half1
                       WHEN 'half2' THEN s.deckel_half2
                       ELSE s.deckel_finale END AS deckel,
           bar.most AS bar
    FROM most s
    JOIN bar ON bar.stammtisch_id = s.stammtisch_id AND bar.year = s.year
    CROSS JOIN (SELECT 'half1' AS half UNION ALL SELECT 'half2' UNION ALL SELECT 'finale') h
    WHERE s.most >= bar.most
),
yearly AS (
    SELECT h.stammtisch_id, h.year, h.game_id, h.played_local, h.half, h.player_id, pl.name,
           h.deckel,
           row_number() OVER (
               PARTITION BY h.stammtisch_id, h.year
               ORDER BY h.deckel DESC, h.played_local, h.game_id, h.half, pl.name, h.player_id
           ) AS place
    FROM halves h
    JOIN players pl ON pl.id = h.player_id
    WHERE h.deckel > 0 AND h.deckel >= h.bar
),
top AS (
    SELECT y.*, y.year AS period FROM yearly y WHERE place <= $limit
),
ever AS (
    SELECT stammtisch_id, 0 AS period, game_id, played_local, half, player_id, name, deckel,
           row_number() OVER (
               PARTITION BY stammtisch_id
               ORDER BY deckel DESC, played_local, game_id, half, name, player_id) AS place
    FROM top
),
both_ AS (
    SELECT stammtisch_id, period, game_id, played_local, half, player_id, name, deckel, place
    FROM top
    UNION ALL
    SELECT stammtisch_id, period, game_id, played_local, half, player_id, name, deckel, place
    FROM ever WHERE place <= $limit
)
SELECT stammtisch_id, period, game_id, played_local, half, player_id, name, deckel
FROM both_
ORDER BY stammtisch_id, period, place
