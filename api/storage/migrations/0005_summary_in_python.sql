-- 0005: the per-player summary rows (player_game_facts) are derived with the other facts of a
-- game, in Python (api/facts.py, summarize), and written with them: appended by the entry that
-- finishes the game, rewritten by an undo or a rebuild. The view player_game_summary, which
-- derived them in SQL since 0003, cost a recording transaction 15–30 ms on a small machine for
-- every finished game; it goes, so that the figures keep one definition.
DROP VIEW player_game_summary;
