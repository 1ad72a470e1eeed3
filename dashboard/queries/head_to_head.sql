-- Finale results per Stammtisch and period (the calendar year at the table, 0: all time) for
-- every pair of players that met in a Finale: player_a has the smaller id; wins count Finals
-- the other one lost.
WITH finals AS (
    SELECT g.stammtisch_id, g.year,
           CASE WHEN f.finalist1_id < f.finalist2_id THEN f.finalist1_id
                ELSE f.finalist2_id END AS a_id,
           CASE WHEN f.finalist1_id < f.finalist2_id THEN f.finalist2_id
                ELSE f.finalist1_id END AS b_id,
           f.loser_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE f.status = 'finished' AND f.finalist1_id IS NOT NULL
),
pairs AS (
    SELECT stammtisch_id, year, a_id, b_id, count(*) AS finals,
           sum(CASE WHEN loser_id = b_id THEN 1 ELSE 0 END) AS wins_a,
           sum(CASE WHEN loser_id = a_id THEN 1 ELSE 0 END) AS wins_b
    FROM finals GROUP BY stammtisch_id, year, a_id, b_id
),
periods AS (
    SELECT stammtisch_id, year AS period, a_id, b_id, finals, wins_a, wins_b FROM pairs
    UNION ALL
    SELECT stammtisch_id, 0, a_id, b_id, sum(finals), sum(wins_a), sum(wins_b)
    FROM pairs GROUP BY stammtisch_id, a_id, b_id
)
SELECT p.stammtisch_id, p.period,
       p.a_id AS player_a_id, pa.name AS player_a,
       p.b_id AS player_b_id, pb.name AS player_b,
       p.finals, p.wins_a, p.wins_b
FROM periods p
JOIN players pa ON pa.id = p.a_id
JOIN players pb ON pb.id = p.b_id
ORDER BY p.stammtisch_id, p.period, p.finals DESC, pa.name, pb.name
