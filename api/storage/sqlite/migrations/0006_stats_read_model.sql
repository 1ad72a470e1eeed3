-- 0006 (SQLite): the statistics read model (dashboard/readmodel.py). DuckDB computes every
-- statistic of the stale Stammtische set-based and writes one row per Stammtisch and period
-- here; every server process and `schocken dashboard build` read it.
CREATE TABLE stats_periods (
    stammtisch_id INTEGER NOT NULL,
    year          INTEGER NOT NULL,   -- calendar year at the table; 0: all time
    games         INTEGER NOT NULL,   -- finished games of the period
    body          TEXT NOT NULL,      -- JSON: dashboard.stats.Period
    computed_at   TIMESTAMP NOT NULL,
    version       INTEGER NOT NULL,   -- the stale mark it was computed from (0: none)
    PRIMARY KEY (stammtisch_id, year)
);
-- Stammtische whose statistics are out of date, written in the transaction of the write that
-- made them so (a game finished or undone or imported, a player or Stammtisch changed); a
-- refresh deletes a mark only if its version is still the one it read.
CREATE TABLE stats_stale (
    stammtisch_id INTEGER PRIMARY KEY,
    version       INTEGER NOT NULL
);
-- the input of an incremental refresh is found by Stammtisch
CREATE INDEX games_stammtisch_year ON games (stammtisch_id, year);
-- a database from before the read model: everything is stale
INSERT INTO stats_stale (stammtisch_id, version) SELECT id, 1 FROM stammtische;
