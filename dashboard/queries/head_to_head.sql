-- Finale results for every pair of players that met in a Finale in the period: player_a has the
-- smaller id; wins count Finals the other one lost.
WITH finals AS (
    SELECT CASE WHEN f.finalist1_id < f.finalist2_id THEN f.finalist1_id
                ELSE f.finalist2_id END AS a_id,
           CASE WHEN f.finalist1_id < f.finalist2_id THEN f.finalist2_id
                ELSE f.finalist1_id END AS b_id,
           f.loser_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished' AND f.finalist1_id IS NOT NULL
)
SELECT finals.a_id AS player_a_id, pa.name AS player_a,
       finals.b_id AS player_b_id, pb.name AS player_b,
       count(*) AS finals,
       sum(CASE WHEN finals.loser_id = finals.b_id THEN 1 ELSE 0 END) AS wins_a,
       sum(CASE WHEN finals.loser_id = finals.a_id THEN 1 ELSE 0 END) AS wins_b
FROM finals
JOIN players pa ON pa.id = finals.a_id
JOIN players pb ON pb.id = finals.b_id
GROUP BY finals.a_id, pa.name, finals.b_id, pb.name
ORDER BY finals DESC, pa.name, pb.name
