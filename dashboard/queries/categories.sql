-- Results of single throws that nobody chose to keep, per Stammtisch, period (the calendar
-- year at the table, 0: all time), player and category: one throw from the hand that was
-- either blind or forced by the round's throw limit of one (not the opener, who chose to stop).
-- A throw the player could have repeated is biased towards good results, so only these are
-- comparable with the exact probabilities of one throw of three dice (api/rules/RULES.md §2).
-- The category is read from the dice (default order), whatever the house rules call it; the
-- counts per player and game are in player_game_facts (api/storage migration 0003).
WITH yearly AS (
    SELECT stammtisch_id, year, player_id,
           sum(fair_schock_aus) AS schock_aus, sum(fair_schock) AS schock,
           sum(fair_general) AS general, sum(fair_strasse) AS strasse, sum(fair_zahl) AS zahl
    FROM player_game_facts
    GROUP BY stammtisch_id, year, player_id
),
fair AS (
    -- the years from the summary rows, all time from the years (each row is read once)
    SELECT stammtisch_id, year AS period, player_id, schock_aus, schock, general, strasse, zahl
    FROM yearly
    UNION ALL
    SELECT stammtisch_id, 0, player_id, sum(schock_aus), sum(schock), sum(general),
           sum(strasse), sum(zahl)
    FROM yearly GROUP BY stammtisch_id, player_id
),
per_category AS (
    SELECT stammtisch_id, period, player_id, 'schock_aus' AS category, schock_aus AS throws FROM fair
    UNION ALL SELECT stammtisch_id, period, player_id, 'schock', schock FROM fair
    UNION ALL SELECT stammtisch_id, period, player_id, 'general', general FROM fair
    UNION ALL SELECT stammtisch_id, period, player_id, 'strasse', strasse FROM fair
    UNION ALL SELECT stammtisch_id, period, player_id, 'zahl', zahl FROM fair
)
SELECT c.stammtisch_id, c.period, c.player_id, pl.name, c.category, c.throws
FROM per_category c JOIN players pl ON pl.id = c.player_id
WHERE c.throws > 0
ORDER BY c.stammtisch_id, c.period, pl.name, c.player_id, c.category
