-- What the built site depends on, per Stammtisch and year: when a row changes (a game finished,
-- was undone, a Stammtisch renamed or made private, a player renamed), those pages are stale.
-- year NULL carries the Stammtisch's own fields and its players.
SELECT s.id AS stammtisch_id, s.slug, g.year,
       count(*) AS games, sum(f.last_seq) AS entries, max(g.id) AS last_game,
       NULL AS about
FROM stammtische s
JOIN games g ON g.stammtisch_id = s.id
JOIN game_facts f ON f.game_id = g.id AND f.status = 'finished'
WHERE $include_private OR NOT s.private
GROUP BY s.id, s.slug, g.year
UNION ALL
SELECT s.id, s.slug, NULL, NULL, NULL, NULL,
       s.name || '|' || CAST(s.private AS VARCHAR) || '|' ||
       coalesce((SELECT string_agg(p.name || ':' || CAST(p.retired AS VARCHAR), ',' ORDER BY p.id)
                 FROM players p WHERE p.stammtisch_id = s.id), '')
FROM stammtische s
WHERE $include_private OR NOT s.private
ORDER BY 1, 3 NULLS FIRST
