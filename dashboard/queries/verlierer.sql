-- Verlierer des Jahres: every player of the period ranked by games lost; ties go to the higher
-- share of games played that were lost, then to more halves lost (Hälfte 1 and 2, not the
-- Finale). Players tied on all three share a rank. Finished games only.
-- safe_rank ranks the safest players: lowest share lost among those with at least $min_games
-- games; ties go to more games played, then fewer halves lost (NULL: too few games).
WITH g AS (
    SELECT g.id AS game_id, f.loser_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
played AS (
    SELECT p.player_id,
           count(*) AS games_played,
           sum(CASE WHEN g.loser_id = p.player_id THEN 1 ELSE 0 END) AS games_lost
    FROM g JOIN game_players p ON p.game_id = g.game_id
    GROUP BY p.player_id
),
halves AS (
    SELECT h.loser_id AS player_id, count(*) AS halves_lost
    FROM g JOIN half_facts h ON h.game_id = g.game_id
    WHERE h.half IN ('half1', 'half2')
    GROUP BY h.loser_id
),
scored AS (
    SELECT played.player_id, pl.name, played.games_played, played.games_lost,
           CAST(played.games_lost AS DOUBLE) / played.games_played AS share_lost,
           coalesce(halves.halves_lost, 0) AS halves_lost
    FROM played
    JOIN players pl ON pl.id = played.player_id
    LEFT JOIN halves ON halves.player_id = played.player_id
)
SELECT rank() OVER (ORDER BY games_lost DESC, share_lost DESC, halves_lost DESC) AS rank,
       player_id, name, games_played, games_lost, share_lost, halves_lost,
       CASE WHEN games_played >= $min_games THEN rank() OVER (
           PARTITION BY games_played >= $min_games
           ORDER BY share_lost, games_played DESC, halves_lost) END AS safe_rank
FROM scored
ORDER BY rank, name, player_id
