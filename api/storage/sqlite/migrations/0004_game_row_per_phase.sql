-- 0004 (SQLite): the game row changes only when the game changes phase; its round counter
-- goes (as the DuckDB store's 0004). The rounds of a game are in round_facts and, for a
-- finished game, in the sum of its half_facts.
ALTER TABLE game_facts DROP COLUMN rounds;
