-- 0004 (PostgreSQL): the game row's round counter goes, as the SQLite 0004.
ALTER TABLE game_facts DROP COLUMN rounds;
