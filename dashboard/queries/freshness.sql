-- What the built site depends on, per Stammtisch and year: when a row changes (a game finished,
-- an entry was undone, a Stammtisch renamed or made private, a player renamed), those pages
-- are stale. entries: log entries of the finished games (undo appends one too).
-- year NULL carries the Stammtisch's own fields and its players.
WITH logged AS (
    SELECT game_id, max(seq) AS entries FROM game_log GROUP BY game_id
),
halves AS (
    SELECT game_id, sum(rounds) AS rounds FROM half_facts GROUP BY game_id
)
SELECT s.id AS stammtisch_id, s.slug, g.year,
       count(*) AS games, sum(coalesce(logged.entries, 0)) AS entries, max(g.id) AS last_game,
       CAST(sum(halves.rounds) AS VARCHAR) AS about
FROM stammtische s
JOIN games g ON g.stammtisch_id = s.id
JOIN game_facts f ON f.game_id = g.id AND f.status = 'finished'
LEFT JOIN logged ON logged.game_id = g.id
LEFT JOIN halves ON halves.game_id = g.id
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
