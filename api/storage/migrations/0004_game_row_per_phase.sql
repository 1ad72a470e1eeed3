-- 0004: the game row changes only when the game changes phase (a half lost, the Finale, the
-- loser), no longer with every resolved round. Its round counter made recording rewrite the
-- row (an INSERT OR REPLACE, the dearest statement of a write) in almost every transaction.
-- The rounds of a game are in round_facts; those of a finished game also sum up its half_facts
-- (each half and the Finale count their rounds, repeated ones included), which is where the
-- statistics read them.
ALTER TABLE game_facts DROP COLUMN rounds;
