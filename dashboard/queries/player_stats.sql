-- Per player of the period (finished games only): games played and lost, halves lost (Hälfte 1
-- and 2), Finale played and lost, Blattschuss (lost both halves), Deckel received (rounds and
-- penalties), Schock aus thrown, turns, first and last game, attendance (share of the period's
-- games the player sat at) and the longest run of games without a loss (games the player
-- missed do not break a run).
-- rank: Verlierer des Jahres ranking – more games lost first; ties go to the higher share of
-- games played that were lost, then to more halves lost; players tied on all three share a rank.
-- safe_rank: the safest players – lowest share lost among those with at least $min_games games;
-- ties go to more games played, then to fewer halves lost (NULL: too few games).
WITH seats AS (
    -- one row per player and finished game: the summary of api/storage migration 0003
    SELECT * FROM player_game_facts
    WHERE stammtisch_id = $stammtisch_id AND ($year IS NULL OR year = $year)
),
played AS (
    SELECT player_id,
           count(*) AS games_played,
           sum(lost) AS games_lost,
           sum(finalist) AS finals_played,
           sum(finale_lost) AS finals_lost,
           sum(blattschuss) AS blattschuss,
           sum(halves_lost) AS halves_lost,
           sum(deckel) AS deckel,
           sum(schock_aus) AS schock_aus,
           sum(turns) AS turns,
           min(played_local) AS first_game,
           max(played_local) AS last_game
    FROM seats
    GROUP BY player_id
),
numbered AS (
    -- every loss opens a new group; the games after it (until the next loss) are one run
    SELECT player_id, lost,
           sum(lost) OVER (PARTITION BY player_id ORDER BY played_local, game_id
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS grp
    FROM seats
),
runs AS (
    SELECT player_id, grp, sum(1 - lost) AS run FROM numbered GROUP BY player_id, grp
),
streaks AS (
    SELECT player_id, max(run) AS longest_without_loss FROM runs GROUP BY player_id
),
total AS (SELECT count(DISTINCT game_id) AS games FROM seats),
scored AS (
    SELECT played.player_id, pl.name, played.games_played, played.games_lost,
           CAST(played.games_lost AS DOUBLE) / played.games_played AS share_lost,
           played.halves_lost,
           played.finals_played, played.finals_lost, played.blattschuss,
           played.deckel,
           CAST(played.deckel AS DOUBLE) / played.games_played AS deckel_per_game,
           played.schock_aus,
           played.turns,
           streaks.longest_without_loss,
           played.first_game, played.last_game,
           CAST(played.games_played AS DOUBLE) / total.games AS attendance
    FROM played
    CROSS JOIN total
    JOIN players pl ON pl.id = played.player_id
    JOIN streaks ON streaks.player_id = played.player_id
)
SELECT rank() OVER (ORDER BY games_lost DESC, share_lost DESC, halves_lost DESC) AS rank,
       CASE WHEN games_played >= $min_games THEN rank() OVER (
           PARTITION BY games_played >= $min_games
           ORDER BY share_lost, games_played DESC, halves_lost) END AS safe_rank,
       scored.*
FROM scored
ORDER BY name, player_id
