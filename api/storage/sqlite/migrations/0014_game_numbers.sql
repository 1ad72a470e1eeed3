-- 0014 (SQLite): game numbers per Stammtisch ("Spiel 1" is a Stammtisch's first game, not the
-- global id), and games called off at the table.
-- number: filled for the games there are, in the order they were stored (id); a new game gets
-- the next number of its Stammtisch from the trigger (whoever inserts it: the services, an
-- import, a copy keeps the number it brings).
-- abandoned_at: when the game was called off ("Spiel abbrechen"); the game and its log are
-- kept, its facts are gone from the statistics (NULL: not called off).
ALTER TABLE games ADD COLUMN number INTEGER;
ALTER TABLE games ADD COLUMN abandoned_at TIMESTAMP;

UPDATE games SET number = n.number
FROM (SELECT id, row_number() OVER (PARTITION BY stammtisch_id ORDER BY id) AS number
      FROM games) AS n
WHERE games.id = n.id;

CREATE UNIQUE INDEX games_number ON games (stammtisch_id, number);

CREATE TRIGGER games_number AFTER INSERT ON games WHEN NEW.number IS NULL
BEGIN
    UPDATE games SET number = (
        SELECT coalesce(max(number), 0) + 1 FROM games WHERE stammtisch_id = NEW.stammtisch_id
    ) WHERE id = NEW.id;
END;
