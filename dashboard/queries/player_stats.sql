-- Per player of the period (finished games only): games played and lost, halves lost (Hälfte 1
-- and 2), Finale played and lost, Blattschuss (lost both halves), Deckel received (rounds and
-- penalties), Schock aus thrown, turns, first and last game, and attendance (share of the
-- period's games the player sat at).
WITH g AS (
    SELECT g.id AS game_id, g.played_local, f.loser_id, f.blattschuss,
           f.finalist1_id, f.finalist2_id
    FROM games g JOIN game_facts f ON f.game_id = g.id
    WHERE g.stammtisch_id = $stammtisch_id AND ($year IS NULL OR g.year = $year)
      AND f.status = 'finished'
),
played AS (
    SELECT p.player_id,
           count(*) AS games_played,
           sum(CASE WHEN g.loser_id = p.player_id THEN 1 ELSE 0 END) AS games_lost,
           sum(CASE WHEN p.player_id IN (g.finalist1_id, g.finalist2_id) THEN 1 ELSE 0 END)
               AS finals_played,
           sum(CASE WHEN p.player_id IN (g.finalist1_id, g.finalist2_id)
                     AND g.loser_id = p.player_id THEN 1 ELSE 0 END) AS finals_lost,
           sum(CASE WHEN g.blattschuss AND g.loser_id = p.player_id THEN 1 ELSE 0 END)
               AS blattschuss,
           min(g.played_local) AS first_game,
           max(g.played_local) AS last_game
    FROM g JOIN game_players p ON p.game_id = g.game_id
    GROUP BY p.player_id
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
total AS (SELECT count(*) AS games FROM g)
SELECT played.player_id, pl.name, played.games_played, played.games_lost,
       CAST(played.games_lost AS DOUBLE) / played.games_played AS share_lost,
       coalesce(halves.halves_lost, 0) AS halves_lost,
       played.finals_played, played.finals_lost, played.blattschuss,
       coalesce(deckel.deckel, 0) AS deckel,
       CAST(coalesce(deckel.deckel, 0) AS DOUBLE) / played.games_played AS deckel_per_game,
       coalesce(turns.schock_aus, 0) AS schock_aus,
       coalesce(turns.turns, 0) AS turns,
       played.first_game, played.last_game,
       CAST(played.games_played AS DOUBLE) / total.games AS attendance
FROM played
CROSS JOIN total
JOIN players pl ON pl.id = played.player_id
LEFT JOIN halves ON halves.player_id = played.player_id
LEFT JOIN deckel ON deckel.player_id = played.player_id
LEFT JOIN turns ON turns.player_id = played.player_id
ORDER BY pl.name, played.player_id
