-- Results of single throws that nobody chose to keep: one throw from the hand that was either
-- blind or forced by the round's throw limit of one (not the opener, who chose to stop). A throw
-- the player could have repeated is biased towards good results, so only these are comparable
-- with the exact probabilities of one throw of three dice (RULES.md section 2).
-- The category is read from the dice (default order), whatever the house rules call it.
WITH g AS (
    SELECT g.id AS game_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
fair AS (
    SELECT t.player_id, t.dice
    FROM g
    JOIN turn_facts t ON t.game_id = g.game_id
    JOIN round_facts r ON r.game_id = t.game_id AND r.round_no = t.round_no
    WHERE t.throws = 1 AND t.hand AND length(t.dice) = 5
      AND (t.blind OR (r.throw_limit = 1 AND r.starter_id <> t.player_id))
)
SELECT fair.player_id, pl.name,
       CASE
           WHEN fair.dice = '1-1-1' THEN 'schock_aus'
           WHEN substr(fair.dice, 1, 3) = '1-1' THEN 'schock'
           WHEN substr(fair.dice, 1, 1) = substr(fair.dice, 3, 1)
                AND substr(fair.dice, 3, 1) = substr(fair.dice, 5, 1) THEN 'general'
           WHEN fair.dice IN ('1-2-3', '2-3-4', '3-4-5', '4-5-6') THEN 'strasse'
           ELSE 'zahl'
       END AS category,
       count(*) AS throws
FROM fair JOIN players pl ON pl.id = fair.player_id
GROUP BY fair.player_id, pl.name, category
ORDER BY pl.name, fair.player_id, category
