-- Per player of the period (finished games only): games played and lost, halves lost (Hälfte 1
-- and 2), Finale played and lost, Blattschuss (lost both halves), Deckel received (rounds and
-- penalties), Schock aus thrown, turns, first and last game, attendance (share of the period's
-- games the player sat at) and the longest run of games without a loss (games the player
-- missed do not break a run).
-- rank: Verlierer des Jahres ranking – more games lost first; ties go to the higher share of
-- games played that were lost, then to more halves lost; players tied on all three share a rank.
-- safe_rank: the safest players – lowest share lost among those with at least $min_games games;
-- ties go to more games played, then to fewer halves lost (NULL: too few games).
WITH g AS (
    SELECT g.id AS game_id, g.played_local, f.loser_id, f.blattschuss,
           f.finalist1_id, f.finalist2_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
seats AS (
    SELECT p.player_id, g.game_id, g.played_local, g.blattschuss,
           CASE WHEN g.loser_id = p.player_id THEN 1 ELSE 0 END AS lost,
           CASE WHEN p.player_id IN (g.finalist1_id, g.finalist2_id) THEN 1 ELSE 0 END AS final
    FROM g JOIN game_players p ON p.game_id = g.game_id
),
played AS (
    SELECT player_id,
           count(*) AS games_played,
           sum(lost) AS games_lost,
           sum(final) AS finals_played,
           sum(final * lost) AS finals_lost,
           sum(CASE WHEN blattschuss THEN lost ELSE 0 END) AS blattschuss,
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
halves AS (
    SELECT h.loser_id AS player_id, count(*) AS halves_lost
    FROM g JOIN half_facts h ON h.game_id = g.game_id
    WHERE h.half IN ('half1', 'half2')
    GROUP BY h.loser_id
),
deckel AS (
    SELECT d.receiver_id AS player_id, sum(d.amount) AS deckel
    FROM g JOIN deckel_moves d ON d.game_id = g.game_id
    GROUP BY d.receiver_id
),
turns AS (
    SELECT t.player_id, count(*) AS turns,
           sum(CASE WHEN t.category = 'schock_aus' THEN 1 ELSE 0 END) AS schock_aus
    FROM g JOIN turn_facts t ON t.game_id = g.game_id
    GROUP BY t.player_id
),
total AS (SELECT count(*) AS games FROM g),
scored AS (
    SELECT played.player_id, pl.name, played.games_played, played.games_lost,
           CAST(played.games_lost AS DOUBLE) / played.games_played AS share_lost,
           coalesce(halves.halves_lost, 0) AS halves_lost,
           played.finals_played, played.finals_lost, played.blattschuss,
           coalesce(deckel.deckel, 0) AS deckel,
           CAST(coalesce(deckel.deckel, 0) AS DOUBLE) / played.games_played AS deckel_per_game,
           coalesce(turns.schock_aus, 0) AS schock_aus,
           coalesce(turns.turns, 0) AS turns,
           streaks.longest_without_loss,
           played.first_game, played.last_game,
           CAST(played.games_played AS DOUBLE) / total.games AS attendance
    FROM played
    CROSS JOIN total
    JOIN players pl ON pl.id = played.player_id
    JOIN streaks ON streaks.player_id = played.player_id
    LEFT JOIN halves ON halves.player_id = played.player_id
    LEFT JOIN deckel ON deckel.player_id = played.player_id
    LEFT JOIN turns ON turns.player_id = played.player_id
)
SELECT rank() OVER (ORDER BY games_lost DESC, share_lost DESC, halves_lost DESC) AS rank,
       CASE WHEN games_played >= $min_games THEN rank() OVER (
           PARTITION BY games_played >= $min_games
           ORDER BY share_lost, games_played DESC, halves_lost) END AS safe_rank,
       scored.*
FROM scored
ORDER BY name, player_id
