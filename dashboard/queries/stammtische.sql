-- Every Stammtisch with its number of finished games and the years it played.
-- $include_private: false hides private Stammtische (their statistics need the token).
SELECT s.id, s.slug, s.name, s.private,
       count(f.game_id) AS games,
       min(CASE WHEN f.game_id IS NOT NULL THEN g.year END) AS first_year,
       max(CASE WHEN f.game_id IS NOT NULL THEN g.year END) AS last_year
FROM stammtische s
LEFT JOIN games g ON g.stammtisch_id = s.id
LEFT JOIN game_facts f ON f.game_id = g.id AND f.status = 'finished'
WHERE $include_private OR NOT s.private
GROUP BY s.id, s.slug, s.name, s.private
ORDER BY s.name, s.slug
