-- 0014 (PostgreSQL): game numbers per Stammtisch and games called off, as on SQLite. The
-- trigger takes a transaction advisory lock of the Stammtisch (key pair 14, its id) before it
-- counts, so two games started at once in one Stammtisch get different numbers (the second
-- insert waits for the first one's commit). Not the Stammtisch's row lock: FOR UPDATE would
-- block the foreign-key checks of every other write of the Stammtisch (a deadlock with the
-- event outbox's counter row).
ALTER TABLE games ADD COLUMN number integer;
ALTER TABLE games ADD COLUMN abandoned_at timestamp;

UPDATE games SET number = n.number
FROM (SELECT id, row_number() OVER (PARTITION BY stammtisch_id ORDER BY id) AS number
      FROM games) AS n
WHERE games.id = n.id;

CREATE UNIQUE INDEX games_number ON games (stammtisch_id, number);

CREATE FUNCTION games_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.number IS NULL THEN
        PERFORM pg_advisory_xact_lock(14, NEW.stammtisch_id::integer);
        SELECT coalesce(max(number), 0) + 1 INTO NEW.number
        FROM games WHERE stammtisch_id = NEW.stammtisch_id;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER games_number BEFORE INSERT ON games
FOR EACH ROW EXECUTE FUNCTION games_number();
