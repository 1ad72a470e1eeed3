-- Luck and decisions per Stammtisch, period and player (api/rules/RULES.md §13): the sums of
-- the figures the refresher computed per finished game and player (luck_facts,
-- dashboard/luck.py) over the rated turns (every turn after the first of its round), the
-- luckiest first. Rows of a game that is no longer finished have no summary row: they do not
-- count. Sums rounded to 4 decimals (the same text however DuckDB adds them up).
WITH rated AS (
    SELECT f.stammtisch_id, f.year, k.player_id, k.turns, k.expected, k.survived, k.split,
           k.luck, k.given_away
    FROM luck_facts k
    JOIN player_game_facts f ON f.game_id = k.game_id AND f.player_id = k.player_id
),
periods AS (
    SELECT stammtisch_id, year AS period, player_id, turns, expected, survived, split, luck,
           given_away
    FROM rated
    UNION ALL
    SELECT stammtisch_id, 0, player_id, turns, expected, survived, split, luck,
           given_away FROM rated
)
SELECT p.stammtisch_id, p.period, p.player_id, pl.name, sum(p.turns) AS turns,
       round(sum(p.expected), 4) AS expected, sum(p.survived) AS survived,
       sum(p.split) AS split, round(sum(p.luck), 4) AS luck,
       round(sum(p.given_away), 4) AS given_away
FROM periods p
JOIN players pl ON pl.id = p.player_id
GROUP BY p.stammtisch_id, p.period, p.player_id, pl.name
HAVING sum(p.turns) > 0
ORDER BY p.stammtisch_id, p.period, luck DESC, pl.name, p.player_id
