-- 0003 (SQLite): one summary row per player and finished game, so that the statistics of a
-- Stammtisch-year never scan the big per-turn tables; as the DuckDB store's 0003. DuckDB's
-- 0003 also created the view player_game_summary (tests/fixtures/player_game_summary.sql)
-- and filled the table from it; a SQLite database is born after 0005, where the rows are
-- derived in Python (api/domain/facts.py) and the view is gone, so here the step only creates
-- the table.
CREATE TABLE player_game_facts (
    game_id          INTEGER NOT NULL REFERENCES games (id),
    player_id        INTEGER NOT NULL,
    -- copied from games, so that a Stammtisch-year is one filter on this table
    stammtisch_id    INTEGER NOT NULL,
    year             INTEGER NOT NULL,
    played_local     TIMESTAMP NOT NULL,
    lost             INTEGER NOT NULL,  -- 1: lost the game (pays)
    finalist         INTEGER NOT NULL,  -- 1: played the Finale
    finale_lost      INTEGER NOT NULL,
    blattschuss      INTEGER NOT NULL,  -- 1: lost both halves
    halves_lost      INTEGER NOT NULL,  -- Hälfte 1 and 2 (the Finale is not a half)
    deckel           INTEGER NOT NULL,  -- received in the whole game (rounds and penalties)
    deckel_half1     INTEGER NOT NULL,
    deckel_half2     INTEGER NOT NULL,
    deckel_finale    INTEGER NOT NULL,
    turns            INTEGER NOT NULL,
    schock_aus       INTEGER NOT NULL,  -- Schock aus thrown
    -- single throws nobody chose to keep (see the DuckDB migration)
    fair_schock_aus  INTEGER NOT NULL,
    fair_schock      INTEGER NOT NULL,
    fair_general     INTEGER NOT NULL,
    fair_strasse     INTEGER NOT NULL,
    fair_zahl        INTEGER NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
CREATE INDEX player_game_facts_year ON player_game_facts (stammtisch_id, year);
