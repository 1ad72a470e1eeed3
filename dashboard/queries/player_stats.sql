-- Per Stammtisch, period (the calendar year at the table, 0: all time) and player (finished
-- games only): games played and lost, halves lost (Hälfte 1 and 2), Finale played and lost,
-- Blattschuss (lost both halves), Deckel received (rounds and penalties), Schock aus thrown,
-- turns, first and last game, attendance (share of the period's games the player sat at) and
-- the longest run of games without a loss (games the player missed do not break a run).
-- rank: Verlierer des Jahres ranking – more games lost first; ties go to the higher share of
-- games played that were lost, then to more halves lost; players tied on all three share a rank.
-- safe_rank: the safest players – lowest share lost among those with at least min_games games
-- (a share $share_num / $share_den of the period's games, rounded up, at least 1); ties go to
-- more games played, then to fewer halves lost (NULL: too few games).
-- Each summary row (api/storage migration 0003) is read once: the years are computed from
-- them, all time from the years (sums of sums, the least of the firsts …), never from a
-- second copy of every row.
WITH yearly AS (
    SELECT stammtisch_id, year, player_id,
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
    FROM player_game_facts
    GROUP BY stammtisch_id, year, player_id
),
played AS (
    SELECT yearly.*, year AS period FROM yearly
    UNION ALL
    SELECT stammtisch_id, 0, player_id, sum(games_played), sum(games_lost), sum(finals_played),
           sum(finals_lost), sum(blattschuss), sum(halves_lost), sum(deckel), sum(schock_aus),
           sum(turns), min(first_game), max(last_game), 0
    FROM yearly GROUP BY stammtisch_id, player_id
),
numbered AS (
    -- every loss opens a new group, numbered by the player's losses at the Stammtisch so far
    -- (a year's games are one stretch of that order: the number is one group in the year too)
    SELECT stammtisch_id, year, player_id, lost,
           sum(lost) OVER (PARTITION BY stammtisch_id, player_id
                           ORDER BY played_local, game_id
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS grp
    FROM player_game_facts
),
runs AS (
    -- the games without a loss of one group in one year; all time adds up a group's years
    SELECT stammtisch_id, year, player_id, grp, sum(1 - lost) AS run
    FROM numbered GROUP BY stammtisch_id, year, player_id, grp
),
streaks AS (
    SELECT stammtisch_id, year AS period, player_id, max(run) AS longest_without_loss
    FROM runs GROUP BY stammtisch_id, year, player_id
    UNION ALL
    SELECT stammtisch_id, 0, player_id, max(run)
    FROM (SELECT stammtisch_id, player_id, sum(run) AS run
          FROM runs GROUP BY stammtisch_id, player_id, grp) ever
    GROUP BY stammtisch_id, player_id
),
games_per_year AS (
    SELECT stammtisch_id, year, count(DISTINCT game_id) AS games
    FROM player_game_facts GROUP BY stammtisch_id, year
),
counted AS (
    SELECT stammtisch_id, year AS period, games FROM games_per_year
    UNION ALL
    SELECT stammtisch_id, 0, sum(games) FROM games_per_year GROUP BY stammtisch_id
),
total AS (
    SELECT stammtisch_id, period, games,
           (games * $share_num + $share_den - 1
            - (games * $share_num + $share_den - 1) % $share_den) / $share_den AS min_games
    FROM counted
),
scored AS (
    SELECT played.stammtisch_id, played.period,
           CASE WHEN total.min_games < 1 THEN 1 ELSE total.min_games END AS min_games,
           played.player_id, pl.name, played.games_played, played.games_lost,
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
    JOIN total ON total.stammtisch_id = played.stammtisch_id AND total.period = played.period
    JOIN players pl ON pl.id = played.player_id
    JOIN streaks ON streaks.stammtisch_id = played.stammtisch_id
                AND streaks.period = played.period AND streaks.player_id = played.player_id
)
SELECT stammtisch_id, period,
       rank() OVER (PARTITION BY stammtisch_id, period
                    ORDER BY games_lost DESC, share_lost DESC, halves_lost DESC) AS rank,
       CASE WHEN games_played >= min_games THEN rank() OVER (
           PARTITION BY stammtisch_id, period, games_played >= min_games
           ORDER BY share_lost, games_played DESC, halves_lost) END AS safe_rank,
       player_id, name, games_played, games_lost, share_lost, halves_lost, finals_played,
       finals_lost, blattschuss, deckel, deckel_per_game, schock_aus, turns,
       longest_without_loss, first_game, last_game, attendance
FROM scored
ORDER BY stammtisch_id, period, name, player_id
